/**
 * Media understanding: what a message's attachments say, in words the model can read.
 *
 * A channel saves what it received (owner-only, under the state dir) and hands the files
 * over as `InboundMedia` with a local path; images it may also send inline. The pipeline
 * passes the saved files on as the dispatch's `attachments`, and before the turn the agent
 * asks the `media-understanding` service — when a plugin offers it — to turn them into text
 * (a voice note's transcript, a document's text, a video's frames) and images. The result is
 * the user message the model sees and the transcript keeps. Without the service the turn runs
 * on the message as the channel wrote it.
 */
import type { InboundMedia } from './channels.js';
import type { ImagePart } from './models.js';

export const MEDIA_UNDERSTANDING_SERVICE = 'media-understanding';

export type MediaKind = 'image' | 'audio' | 'video' | 'document';

export interface MediaPrepareInput {
  agentId: string;
  sessionKey: string;
  channel?: string;
  /** The message as the channel wrote it (its notes about saved files included). */
  text: string;
  attachments: readonly InboundMedia[];
  signal?: AbortSignal;
}

export interface MediaPrepared {
  /** The user message for the model and the transcript. */
  text: string;
  /** Images to show the model, beside any the channel sent inline. */
  images: ImagePart[];
}

export interface MediaUnderstandingService {
  prepare(input: MediaPrepareInput): Promise<MediaPrepared>;
}
