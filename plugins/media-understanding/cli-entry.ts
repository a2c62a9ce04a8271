/**
 * A `tools.media.models[]` CLI entry (`{type: "cli", command, args}`): OpenClaw's
 * `{{AttachmentPath}}`-style templates filled in, the program run without a shell in a scratch
 * dir, its answer read from stdout — or from `{{OutputBase}}.txt` when it wrote one there
 * (whisper.cpp's `-otxt -of {{OutputBase}}`).
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import type { MediaModelEntry } from './generated/types.js';
import { runProgram } from './run.js';

export interface CliContext {
  path: string;
  mimeType: string;
  index: number;
  prompt: string;
  maxChars?: number;
  language?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** OpenClaw's names, with the older Media* ones it still accepts. */
function fill(arg: string, values: Record<string, string>): string {
  return arg.replace(/\{\{\s*(\w+)\s*\}\}/g, (match, name: string) => values[name] ?? match);
}

export async function runCliEntry(entry: MediaModelEntry, ctx: CliContext): Promise<string> {
  if (!entry.command?.trim() || !entry.args?.length)
    throw new Error('a CLI entry needs a command and a nonempty args list');
  const outputDir = await mkdtemp(join(tmpdir(), 'claw-media-'));
  try {
    const outputBase = join(outputDir, basename(ctx.path, extname(ctx.path)));
    const values: Record<string, string> = {
      AttachmentPath: ctx.path,
      AttachmentUrl: ctx.path,
      AttachmentContentType: ctx.mimeType,
      AttachmentDir: dirname(ctx.path),
      AttachmentIndex: String(ctx.index),
      OutputDir: outputDir,
      OutputBase: outputBase,
      Prompt: ctx.prompt,
      MaxChars: String(ctx.maxChars ?? ''),
      Language: ctx.language ?? '',
    };
    for (const [now, old] of [
      ['AttachmentPath', 'MediaPath'],
      ['AttachmentUrl', 'MediaUrl'],
      ['AttachmentContentType', 'MediaType'],
      ['AttachmentDir', 'MediaDir'],
    ] as const)
      values[old] = values[now]!;
    const command = entry.command.replace(/^~(?=\/|$)/, process.env.HOME ?? '~');
    const { stdout } = await runProgram(
      command,
      entry.args.map((arg) => fill(arg, values)),
      {
        timeoutMs: entry.timeoutSeconds ? entry.timeoutSeconds * 1000 : ctx.timeoutMs,
        signal: ctx.signal,
        cwd: outputDir,
      },
    );
    // A file the program wrote beside OutputBase (whisper.cpp -otxt) is its answer.
    const written = (await readdir(outputDir)).find((name) => name.endsWith('.txt'));
    const text = written ? await readFile(join(outputDir, written), 'utf8') : stdout.toString('utf8');
    return text.trim();
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}
