import { maskSecret } from './config.js';

// A key the service echoes (in a 401 body, an error record) must not reach the screen or a
// log. Text sgq prints passes through `maskSecretsIn` on its way out, whoever wrote it.

/**
 * Keys shorter than this are not looked for: masking every "abc" in a message would garble
 * it, and a key that short is no secret.
 */
const SHORTEST_MASKED = 4;

/** The ways a key can show in text: as sent, escaped inside a JSON string, URL-encoded. */
function formsOf(secret: string): string[] {
  return [...new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])];
}

/** `text` with every occurrence of each secret replaced by its masked form (`****abcd`). */
export function maskSecretsIn(text: string, secrets: readonly string[]): string {
  for (const secret of secrets) {
    if (secret.length < SHORTEST_MASKED) continue;
    const masked = maskSecret(secret);
    for (const form of formsOf(secret)) if (text.includes(form)) text = text.replaceAll(form, masked);
  }
  return text;
}
