// Video tasks of the demo backend: queued → in_progress → completed within about a second, kept in a bounded
// in-memory map (the demo lives in the gateway process, so there is nothing to share across replicas).
import { shortHash } from './demo-text.js';

type Json = Record<string, unknown>;

const VIDEO_QUEUED_MS = 150;
export const VIDEO_DONE_MS = 750;
const MAX_VIDEOS = 1_000;

interface VideoTask {
  id: string;
  createdMs: number;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  remixedFrom: string | null;
  deleted: boolean;
}

export class DemoVideos {
  readonly #tasks = new Map<string, VideoTask>();
  #counter = 0;

  create(fields: Json, now: number, remixedFrom: string | null = null): Json {
    const id = `video_demo${shortHash(`${now}\0${this.#counter++}\0${String(fields.prompt ?? '')}`, 24)}`;
    const task: VideoTask = {
      id,
      createdMs: now,
      model: String(fields.model ?? 'demo'),
      prompt: String(fields.prompt ?? ''),
      seconds: String(fields.seconds ?? '4'),
      size: String(fields.size ?? '720x1280'),
      remixedFrom,
      deleted: false,
    };
    this.#tasks.set(id, task);
    if (this.#tasks.size > MAX_VIDEOS) this.#tasks.delete(this.#tasks.keys().next().value!);
    return this.#view(task, now);
  }

  get(id: string, now: number): Json | undefined {
    const t = this.#tasks.get(id);
    return t && !t.deleted ? this.#view(t, now) : undefined;
  }

  isCompleted(id: string, now: number): boolean {
    const t = this.#tasks.get(id);
    return t !== undefined && !t.deleted && now - t.createdMs >= VIDEO_DONE_MS;
  }

  remix(id: string, fields: Json, now: number): Json | undefined {
    const t = this.#tasks.get(id);
    if (!t || t.deleted) return undefined;
    return this.create({ model: t.model, seconds: t.seconds, size: t.size, prompt: fields.prompt ?? t.prompt }, now, id);
  }

  delete(id: string): Json | undefined {
    const t = this.#tasks.get(id);
    if (!t || t.deleted) return undefined;
    t.deleted = true;
    return { id, object: 'video.deleted', deleted: true };
  }

  #view(t: VideoTask, now: number): Json {
    const age = now - t.createdMs;
    const status = age < VIDEO_QUEUED_MS ? 'queued' : age < VIDEO_DONE_MS ? 'in_progress' : 'completed';
    const progress = status === 'queued' ? 0 : status === 'completed' ? 100 : Math.floor(((age - VIDEO_QUEUED_MS) / (VIDEO_DONE_MS - VIDEO_QUEUED_MS)) * 100);
    return {
      id: t.id,
      object: 'video',
      model: t.model,
      status,
      progress,
      created_at: Math.floor(t.createdMs / 1000),
      completed_at: status === 'completed' ? Math.floor((t.createdMs + VIDEO_DONE_MS) / 1000) : null,
      expires_at: null,
      prompt: t.prompt,
      seconds: t.seconds,
      size: t.size,
      quality: 'standard',
      remixed_from_video_id: t.remixedFrom,
      error: null,
    };
  }
}
