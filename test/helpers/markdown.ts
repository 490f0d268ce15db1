import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import GithubSlugger from 'github-slugger';

// Reads Markdown as GitHub renders it, far enough to check links: headings and their anchors,
// links outside code, fenced blocks by language and the sections under a heading.

/** The lines of a page outside fenced code blocks (``` or ~~~), with their numbers. */
export function proseLines(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ line, n: i + 1 });
  });
  return out;
}

/** A heading's text as GitHub slugs it: inline code, links, emphasis and HTML reduced to their text. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*)(.+?)\1/g, '$2');
}

/** The anchors GitHub gives a page's headings, duplicates numbered -1, -2, … as it does. */
export function anchors(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const found = new Set<string>();
  for (const { line } of proseLines(text)) {
    const m = /^ {0,3}#{1,6}\s+(.*)$/.exec(line);
    if (m) found.add(slugger.slug(headingText(m[1]!)));
  }
  return found;
}

/** The link targets of a page's prose, inline code spans left out. */
export function links(text: string): { target: string; n: number }[] {
  const out: { target: string; n: number }[] = [];
  for (const { line, n } of proseLines(text)) {
    const prose = line.replace(/(`+)[\s\S]*?\1/g, '');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, n });
    for (const m of prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)) out.push({ target: m[1]!, n });
  }
  return out;
}

/** Every relative link of `file` (under `root`) whose file or #anchor does not exist, as "file:line: target (why)". */
export function danglingLinks(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const problems: string[] = [];
  for (const { target, n } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // absolute: http:, mailto:, …
    const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
    const path = pathPart === '' ? join(root, file) : join(root, dirname(file), decodeURI(pathPart));
    const where = `${file}:${n}: ${target}`;
    if (!existsSync(path)) {
      problems.push(`${where} (no file ${relative(root, path)})`);
      continue;
    }
    if (anchor === undefined || anchor === '' || statSync(path).isDirectory() || !path.endsWith('.md')) continue;
    if (!anchors(readFileSync(path, 'utf8')).has(decodeURIComponent(anchor))) problems.push(`${where} (no heading #${anchor} in ${relative(root, path)})`);
  }
  return problems;
}

/** The fenced blocks of a language under the heading `title` (up to the next heading of its level or higher). */
export function blocksUnder(text: string, title: string, language: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^#{1,6} ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`).test(l));
  if (start < 0) return [];
  const level = /^#+/.exec(lines[start]!)![0].length;
  const blocks: string[] = [];
  let current: string[] | undefined;
  for (const line of lines.slice(start + 1)) {
    if (current === undefined) {
      const heading = /^(#+) /.exec(line);
      if (heading && heading[1]!.length <= level) break;
      if (line.trim() === '```' + language) current = [];
    } else if (line.trim() === '```') {
      blocks.push(current.join('\n'));
      current = undefined;
    } else {
      current.push(line);
    }
  }
  return blocks;
}
