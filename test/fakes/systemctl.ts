/**
 * A fake `systemctl` to put first on PATH: it records its arguments in a log and answers
 * like a user manager with the unit running (pid 4242), or — with FAKE_SYSTEMCTL_NOBUS set —
 * like one that cannot be reached (a container, an SSH session without a user bus).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const SCRIPT = `#!/bin/sh
echo "$*" >> "$FAKE_SYSTEMCTL_LOG"
if [ -n "$FAKE_SYSTEMCTL_NOBUS" ]; then
  echo "Failed to connect to bus: No medium found" >&2
  exit 1
fi
case "$*" in
  *" show "*) printf 'LoadState=loaded\\nActiveState=active\\nSubState=running\\nUnitFileState=enabled\\nMainPID=4242\\n' ;;
esac
exit 0
`;

/** `home/bin/systemctl`; `env` carries PATH, HOME and the log's path; `calls()` the argument lines so far. */
export function fakeSystemctl(home: string, options: { noBus?: boolean } = {}) {
  const bin = join(home, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'systemctl'), SCRIPT);
  chmodSync(join(bin, 'systemctl'), 0o755);
  const log = join(home, 'systemctl.log');
  const env: Record<string, string> = {
    HOME: home,
    PATH: `${bin}${delimiter}${process.env.PATH}`,
    FAKE_SYSTEMCTL_LOG: log,
    ...(options.noBus ? { FAKE_SYSTEMCTL_NOBUS: '1' } : {}),
  };
  const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);
  return { env, calls, unit: join(home, '.config', 'systemd', 'user', 'openclaw-gateway.service') };
}
