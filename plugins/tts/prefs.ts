/**
 * What `/tts` and the tts.* methods set: a mode per session, and host-wide overrides of the
 * mode and provider (OpenClaw's local TTS preferences, `settings/tts.json` under the state
 * dir, or OPENCLAW_TTS_PREFS). One JSON file, written atomically and owner-only.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomicAsync } from '../../sdk/index.js';
import type { AutoMode } from './settings.js';

export interface PrefsFile {
  auto?: AutoMode;
  provider?: string;
  sessions?: Record<string, { auto: AutoMode }>;
}

export class Prefs {
  private data?: PrefsFile;
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  read(): PrefsFile {
    if (!this.data) {
      try {
        this.data = JSON.parse(readFileSync(this.path, 'utf8')) as PrefsFile;
      } catch {
        this.data = {};
      }
    }
    return this.data;
  }

  session(key: string | undefined): AutoMode | undefined {
    return key ? this.read().sessions?.[key]?.auto : undefined;
  }

  /** Change and save (saves run one after another, each writing the whole file). */
  update(change: (data: PrefsFile) => void): Promise<void> {
    change(this.read());
    const snapshot = JSON.stringify(this.data, null, 2);
    this.writing = this.writing.then(() => writeFileAtomicAsync(this.path, snapshot));
    return this.writing;
  }
}
