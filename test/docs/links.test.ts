// The README and docs/ link to each other and into the repository; a page split or a file move must not leave a
// link pointing nowhere. Checks every relative Markdown link: the file exists, and an #anchor names a heading of
// the target page (GitHub's slugs, from the library GitHub's own slugger is mirrored by).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const pages = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Markdown text without fenced code blocks (links inside them are not links). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

function anchors(path: string): Set<string> {
  const slugger = new GithubSlugger();
  const headings = [...prose(readFileSync(path, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!);
  return new Set(headings.map((h) => slugger.slug(h.replace(/`/g, ''))));
}

describe('documentation links', () => {
  it('there is a README and docs pages to check', () => {
    expect(pages.length).toBeGreaterThan(5);
  });

  for (const page of pages) {
    it(`${page}: every relative link and anchor resolves`, () => {
      const text = prose(readFileSync(join(ROOT, page), 'utf8'));
      const broken: string[] = [];
      for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const path = file === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), file);
        if (!existsSync(path)) {
          broken.push(`${target} (no ${relative(ROOT, path)})`);
          continue;
        }
        if (anchor && path.endsWith('.md') && !anchors(path).has(anchor)) broken.push(`${target} (no such heading)`);
      }
      expect(broken).toEqual([]);
    });
  }
});
