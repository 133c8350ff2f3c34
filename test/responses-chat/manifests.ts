// Routes of the Responses family for the chat completions translation tests, added to the standard manifests (public
// names start with "extra-", which team-a allows): each backend listed as [api, base URL], each a priority tier after
// the one before, so a route can fail over from one kind of backend to the other. The Claude tests' routes, for
// the Responses family.
import { chatClaudeManifests } from '../chat-claude/manifests.js';

export type Api = 'chatCompletions' | 'openai';

export function responsesChatManifests(standardUpstream: string, routes: Record<string, readonly (readonly [Api, string])[]>): string {
  return chatClaudeManifests(standardUpstream, routes, undefined, ['responses']);
}
