/**
 * Image attachments as gateway methods receive them (`{ content: base64 | data: URL,
 * mimeType? }`), decoded and checked once for every method that takes them.
 */
import type { JsonSchema } from '../kernel/index.js';
import { ErrorCodes } from './protocol/constants.js';
import { ProtocolError } from './protocol/frames.js';

export interface AttachmentParam {
  type?: 'image';
  mimeType?: string;
  fileName?: string;
  content: string;
}

/** The schema of an `attachments` param (AttachmentParam[]): at most `maxItems` images. */
export function imageAttachmentsSchema(maxItems: number): JsonSchema {
  return {
    type: 'array',
    maxItems,
    items: {
      type: 'object',
      required: ['content'],
      additionalProperties: false,
      properties: {
        type: { const: 'image' },
        mimeType: { type: 'string', pattern: '^image/' },
        fileName: { type: 'string', maxLength: 255 },
        content: { type: 'string', minLength: 1, description: 'base64, or a data: URL' },
      },
    },
  };
}

/** The images, or a protocol error naming the attachment that is wrong. */
export function decodeImageAttachments(
  attachments: readonly AttachmentParam[] | undefined,
): Array<{ data: string; mimeType: string; fileName?: string }> {
  return (attachments ?? []).map((attachment, index) => {
    const dataUrl = /^data:([^;,]+);base64,(.*)$/s.exec(attachment.content);
    const mimeType = dataUrl?.[1] ?? attachment.mimeType;
    if (!mimeType?.startsWith('image/'))
      throw new ProtocolError(
        ErrorCodes.INVALID_REQUEST,
        `attachments[${index}]: give mimeType (image/png, image/jpeg, …) or a data: URL`,
      );
    const data = (dataUrl?.[2] ?? attachment.content).replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data))
      throw new ProtocolError(ErrorCodes.INVALID_REQUEST, `attachments[${index}].content is not base64`);
    return { data, mimeType, ...(attachment.fileName ? { fileName: attachment.fileName } : {}) };
  });
}
