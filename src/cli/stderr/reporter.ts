import type { Ora } from 'ora';
import { failureLine } from '../../core/errors.js';
import { maskSecretsIn } from '../../core/secrets.js';
import { colorLevel, type Io } from '../start/io.js';
import { loadTextWidth } from '../terminal/text-width.js';
import { visible, visibleJson } from '../terminal/visible.js';

/** How often the progress line is redrawn: its cost stays the same however fast pages come. */
const PROGRESS_MS = 200;

/** The styles of sgq's messages. */
export type Styles = Record<'red' | 'yellow' | 'dim' | 'bold', (text: string) => string>;
const plain = (text: string) => text;
const PLAIN: Styles = { red: plain, yellow: plain, dim: plain, bold: plain };

/** A part of a line in one of sgq's styles (colour on a terminal). */
export interface Styled {
  style: keyof Styles;
  text: string;
}
/** A line for stderr: its text, or its parts, some of them styled. */
export type Line = string | readonly (string | Styled)[];

export interface ReporterOptions {
  quiet?: boolean;
  verbose?: boolean;
}

/**
 * Everything a person reads, on stderr, decided in one place: a spinner and colour only on
 * a terminal, `--quiet` silences all but failures and warnings, `--verbose` adds traces and
 * the summary. Every text is shown, never obeyed: whatever it quotes (the service's error
 * records and messages, user and field names) has its control characters escaped
 * (visible.ts), on a terminal or in a log file alike; sgq's own styles are applied after.
 */
export class Reporter {
  private spinner?: Ora;
  private spinnerText = '';
  /** Builds the progress line for a width; polled every PROGRESS_MS while progress shows. */
  private render?: (width: number) => string;
  private timer?: NodeJS.Timeout;
  /** A countdown (`waiting`) holds the line: the progress does not redraw over it. */
  private held = false;
  /** Keys masked in every line this reporter prints (see maskSecrets). */
  private secrets: string[] = [];
  /** The lines `warnOnce` said. */
  private said = new Set<string>();
  /** Lines kept back while a pager draws on the same terminal (holdLines), written once it ends. */
  private kept?: string[];

  constructor(
    private readonly io: Io,
    readonly options: ReporterOptions = {},
    /** The styles sgq uses, plain unless `open` found colour wanted. */
    private readonly color: Styles = PLAIN,
  ) {}

  /** A reporter for `io`, loading chalk only when colour is wanted (a pipe never pays for it). */
  static async open(io: Io, options: ReporterOptions = {}): Promise<Reporter> {
    const level = colorLevel(io);
    if (level === 0) return new Reporter(io, options);
    const { Chalk } = await import('chalk');
    return new Reporter(io, options, new Chalk({ level }));
  }

  /**
   * Masks these keys (`****abcd`) in everything printed from now on, whoever wrote the text:
   * the service's error records and 401 bodies, traces, the JSON summary. Called once the
   * run knows its key.
   */
  maskSecrets(secrets: readonly (string | undefined)[]): void {
    for (const secret of secrets) if (secret && !this.secrets.includes(secret)) this.secrets.push(secret);
  }

  /** The text with the run's keys masked. */
  masked(text: string): string {
    return this.secrets.length ? maskSecretsIn(text, this.secrets) : text;
  }

  /**
   * Progress is drawn only where a person watches: a terminal, and not --quiet. A terminal
   * that reports a width of 0 (a pty opened with no size: `script` without a terminal,
   * `docker run -t`, some CI runners) gets none either: ora divides by the width to count
   * the lines it must clear, and with 0 it clears forever.
   */
  get showsProgress(): boolean {
    return this.io.stderrIsTTY && !this.options.quiet && (this.io.stderr as { columns?: number }).columns !== 0;
  }

  /** The end-of-run summary: on a terminal, or when asked with --verbose. */
  get showsSummary(): boolean {
    return !this.options.quiet && (this.io.stderrIsTTY || this.options.verbose === true);
  }

  /** Whether `trace` prints, so callers can skip building trace lines. */
  get tracing(): boolean {
    return this.options.verbose === true && !this.options.quiet;
  }

  async startProgress(text: string): Promise<void> {
    if (!this.showsProgress || this.spinner) return;
    this.spinnerText = this.shown(text);
    // string-width measures the line (progress.ts); loaded with ora, on a terminal only.
    const [{ default: ora }] = await Promise.all([import('ora'), loadTextWidth()]);
    // progress() may have moved on while ora was loading.
    this.spinner = ora({ text: this.spinnerText, stream: this.io.stderr, isEnabled: true, discardStdin: false }).start();
  }

  progress(text: string): void {
    text = this.shown(text);
    this.spinnerText = text;
    if (this.spinner) this.spinner.text = text;
  }

  /**
   * Draws the line `render` builds for the room the terminal has, now and every
   * PROGRESS_MS (so the elapsed time moves on while a page is awaited), until stopProgress.
   */
  trackProgress(render: (width: number) => string): void {
    if (!this.showsProgress) return;
    this.render = render;
    this.redraw();
    this.timer ??= setInterval(() => this.redraw(), PROGRESS_MS);
    this.timer.unref();
  }

  /**
   * The columns the progress text may take: the terminal's, less ora's spinner and space,
   * and the last column, which would leave the cursor waiting to wrap.
   */
  get progressWidth(): number {
    const columns = (this.io.stderr as { columns?: number }).columns ?? 80;
    return Math.max(0, columns - 3);
  }

  private redraw(): void {
    if (this.render && !this.held) this.progress(this.render(this.progressWidth));
  }

  /**
   * A pager now draws on the terminal stderr shares: lines wait until it ends (releaseLines)
   * rather than land on its screen (its prompt line), where its next redraw would wipe them.
   */
  holdLines(): void {
    if (this.io.stderrIsTTY) this.kept ??= [];
  }

  /** The pager ended: the lines kept back are written, in order, below what it left on the screen. */
  releaseLines(): void {
    const kept = this.kept;
    this.kept = undefined;
    if (kept && kept.length > 0) this.io.stderr.write(kept.join(''));
  }

  stopProgress(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.render = undefined;
    this.spinner?.stop();
    this.spinner = undefined;
  }

  /**
   * A long wait the user should know about: a countdown on a terminal, one line elsewhere.
   * Returns what ends it.
   */
  waiting(ms: number, text: string): () => void {
    if (!this.showsProgress) {
      this.info(`sgq: ${text}`);
      return () => undefined;
    }
    const before = this.spinnerText;
    const end = Date.now() + ms;
    const tick = () => this.progress(`${text}: ${Math.max(0, Math.ceil((end - Date.now()) / 1000))}s left`);
    tick();
    this.held = true;
    const timer = setInterval(tick, 1000);
    return () => {
      clearInterval(timer);
      this.held = false;
      this.progress(before);
      this.redraw();
    };
  }

  /** A failure: always shown, one line. */
  error(message: string, hint?: string): void {
    this.line([{ style: 'red', text: 'sgq:' }, ` ${failureLine(message, hint)}`]);
  }

  /** Data was left out (a CSV column seen too late): shown even with --quiet, which hides only chatter. */
  warn(message: string): void {
    this.line([{ style: 'yellow', text: 'sgq:' }, ` ${message}`]);
  }

  /** A warning said once in a run, however often its cause is met (a damaged file read at the start and the end). */
  warnOnce(message: string): void {
    if (this.said.has(message)) return;
    this.said.add(message);
    this.warn(message);
  }

  info(message: Line): void {
    if (!this.options.quiet) this.line(message);
  }

  trace(message: string): void {
    if (this.tracing) this.line([{ style: 'dim', text: `sgq: ${message}` }]);
  }

  /** A line shown even with --quiet, without a style (a dry run's). */
  raw(text: string): void {
    this.line(text);
  }

  /** A value as one line of JSON (the JSON summary): still JSON, nothing in it a terminal acts on. */
  json(value: unknown): void {
    this.write(visibleJson(this.masked(JSON.stringify(value))));
  }

  /** Text written by another program as it goes (a jq filter's `debug` and `stderr`): its own line breaks stay. */
  passThrough(text: string): void {
    this.write(visible(this.masked(text), '\n'));
  }

  /** Text sgq did not write, masked and escaped: what it shows of it. */
  private shown(text: string): string {
    return visible(this.masked(text));
  }

  private line(message: Line): void {
    const parts = typeof message === 'string' ? [message] : message;
    this.write(parts.map((part) => (typeof part === 'string' ? this.shown(part) : this.color[part.style](this.shown(part.text)))).join(''));
  }

  private write(text: string): void {
    if (this.kept) {
      this.kept.push(`${text}\n`);
      return;
    }
    const spinning = this.spinner?.isSpinning;
    if (spinning) this.spinner!.clear();
    this.io.stderr.write(`${text}\n`);
    if (spinning) this.spinner!.render();
  }
}
