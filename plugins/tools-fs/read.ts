/** The `read` tool: a window of a text file, or an image the model can look at. */
import type { FileHandle } from 'node:fs/promises';
import {
  errorResult,
  textResult,
  type ToolResult,
  openChecked,
  PathRefused,
  type Containment,
} from '../../sdk/index.js';
import { describeFsError, imageMimeForName, looksBinary, sniffImage } from './files.js';
import { scanLines } from './lines.js';

export interface ReadLimits {
  maxReadBytes: number;
  maxReadLines: number;
}

export interface ReadRequest {
  /** As the model wrote it, for messages. */
  path: string;
  absolutePath: string;
  offset?: number;
  limit?: number;
  containment?: Containment;
}

/** Providers reject larger images (Anthropic's per-image limit is 5 MB). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export async function readFileTool(request: ReadRequest, limits: ReadLimits): Promise<ToolResult> {
  try {
    return await readPath(request, limits);
  } catch (error) {
    if (error instanceof PathRefused) return errorResult(error.message, { path: request.path, refused: true });
    // Permission and I/O errors surface here (after stat succeeded); the model should see them.
    if (typeof (error as NodeJS.ErrnoException | undefined)?.code === 'string')
      return errorResult(describeFsError(error, request.path));
    throw error;
  }
}

async function readPath(request: ReadRequest, limits: ReadLimits): Promise<ToolResult> {
  const { path } = request;
  let opened: Awaited<ReturnType<typeof openChecked>>;
  try {
    opened = await openChecked(request.absolutePath, path, request.containment);
  } catch (error) {
    if (error instanceof PathRefused) throw error;
    return errorResult(describeFsError(error, path));
  }
  if (opened === 'directory') return errorResult(`${path} is a directory; use exec (e.g. ls) to list it`);
  const { handle, size } = opened;
  const file = { ...request, absolutePath: opened.real };
  try {
    const head = await readHead(handle);
    const image = sniffImage(head);
    if (image) return await readImage(file, handle, image, size);
    if (looksBinary(head)) {
      const claimed = imageMimeForName(path);
      const why = claimed
        ? `its name says ${claimed}, but it is not a valid PNG, JPEG, GIF or WebP image`
        : 'it looks binary';
      return errorResult(
        `Cannot read ${path} as text: ${why} (${size} bytes). read returns text files and PNG/JPEG/GIF/WebP images; ` +
          'use exec (e.g. `file`, `xxd | head`) to inspect other files.',
        { path: opened.real, bytes: size, binary: true },
      );
    }
    return await readText(file, handle, limits);
  } finally {
    await handle.close();
  }
}

async function readHead(handle: FileHandle): Promise<Buffer> {
  const buffer = Buffer.alloc(8192);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead);
}

async function readImage(
  request: ReadRequest,
  handle: FileHandle,
  mimeType: string,
  size: number,
): Promise<ToolResult> {
  if (size > MAX_IMAGE_BYTES) {
    return errorResult(
      `${request.path} is a ${mimeType} image of ${size} bytes, over the ${MAX_IMAGE_BYTES}-byte limit for images`,
    );
  }
  const data = await handle.readFile();
  return {
    content: [
      { type: 'text', text: `Read image file ${request.path} [${mimeType}, ${size} bytes]` },
      { type: 'image', data: data.toString('base64'), mimeType },
    ],
    details: { path: request.absolutePath, mimeType, bytes: size },
  };
}

async function readText(request: ReadRequest, handle: FileHandle, limits: ReadLimits): Promise<ToolResult> {
  const start = request.offset ?? 1;
  const scan = await scanLines(handle, {
    start,
    limit: request.limit ?? Number.POSITIVE_INFINITY,
    maxLines: limits.maxReadLines,
    maxBytes: limits.maxReadBytes,
  });
  const total = scan.totalLines;
  const baseDetails = { path: request.absolutePath, totalLines: total };

  if (total === 0) {
    return textResult('[The file is empty.]', { ...baseDetails, startLine: 0, endLine: 0, truncated: false });
  }
  if (start > total) {
    return errorResult(
      `offset ${start} is past the end of ${request.path}, which has ${total} line${total === 1 ? '' : 's'}`,
      baseDetails,
    );
  }

  const endLine = start + scan.lines.length - 1;
  const nextOffset = endLine < total ? endLine + 1 : undefined;
  const truncated = scan.stoppedBy === 'lines' || scan.stoppedBy === 'bytes';
  let text = scan.lines.join('\n');
  const notes: string[] = [];
  if (scan.cutLine) {
    notes.push(
      `Line ${scan.cutLine.line} is ${scan.cutLine.bytes} bytes, over the ${limits.maxReadBytes}-byte limit; only its beginning is shown. ` +
        'Use exec (e.g. `cut -c` or `head -c`) to see the rest of it.',
    );
  }
  if (nextOffset !== undefined) {
    const cap =
      scan.stoppedBy === 'bytes'
        ? ` (${limits.maxReadBytes}-byte limit)`
        : scan.stoppedBy === 'lines'
          ? ` (${limits.maxReadLines}-line limit)`
          : '';
    notes.push(`Showing lines ${start}-${endLine} of ${total}${cap}. Use offset=${nextOffset} to continue.`);
  }
  if (notes.length > 0) text += `\n\n[${notes.join(' ')}]`;

  return textResult(text, {
    ...baseDetails,
    startLine: start,
    endLine,
    truncated,
    ...(truncated ? { truncatedBy: scan.stoppedBy } : {}),
    ...(nextOffset !== undefined ? { nextOffset } : {}),
    ...(scan.cutLine ? { cutLine: scan.cutLine.line } : {}),
  });
}
