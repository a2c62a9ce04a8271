/**
 * The seccomp filter every bwrap sandbox runs under (`bwrap --seccomp FD`): a classic-BPF
 * program, built here because no libseccomp binding ships with claw. It follows Docker's
 * default profile in spirit — whatever a sandboxed command has no business doing is refused
 * with EPERM:
 *
 * - new namespaces (`unshare`, `setns`, `clone` with a CLONE_NEW* flag): a nested user
 *   namespace hands the command a fresh set of capabilities and the kernel's less-travelled
 *   code paths; `clone3` keeps its flags in memory a filter cannot read, so it answers
 *   ENOSYS and libc falls back to `clone`, whose flags are checked;
 * - the kernel's keyring, ptrace and cross-process memory, mounts (old and new API),
 *   modules, kexec, bpf, perf events, userfaultfd, file handles, io_uring, clocks, swap,
 *   reboot, accounting, and `personality` other than the values Docker also allows;
 * - setuid and setgid mode bits (chmod family, and files created with them). When the
 *   gateway runs as root, bwrap maps the sandbox's user onto root's uid on the host, so a
 *   setuid file the command left in the workspace would be setuid root out there;
 * - any other ABI: a foreign architecture in `seccomp_data.arch` (an i386 `int 0x80` on
 *   x86-64 has different numbers) ends the process, x32 calls are refused.
 */

/** `struct sock_filter` fields. */
interface Insn {
  code: number;
  k: number;
  /** Jump targets: a label, or 0 for the next instruction. */
  jt?: string | 0;
  jf?: string | 0;
}

type Line = Insn | { label: string };

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;

/** Offsets in `struct seccomp_data`; an argument's low 32 bits (little-endian machines only). */
const NR = 0;
const ARCH = 4;
const arg = (index: number) => 16 + 8 * index;

const X32_SYSCALL_BIT = 0x40000000;
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET, as Docker's profile masks them. */
export const CLONE_NAMESPACE_FLAGS = 0x7e020000;
export const CLONE_NEWUSER = 0x10000000;
const S_ISUID_ISGID = 0o6000;
/** O_CREAT | __O_TMPFILE (same values on x86-64 and arm64): only then does open's mode argument count. */
const O_CREATES = 0o100 | 0o20000000;
/** What Docker lets personality() set: PER_LINUX, PER_LINUX32, UNAME26 (and with 32), and the 0xffffffff query. */
const PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

interface ArchTable {
  audit: number;
  /** Refused outright. */
  denied: Record<string, number>;
  clone: number;
  clone3: number;
  openat2: number;
  personality: number;
  /** Calls that take a mode: refused when it carries S_ISUID/S_ISGID (and, with `flags`, only when creating). */
  modes: Array<{ name: string; nr: number; mode: number; flags?: number }>;
}

/** Numbers shared by both tables (the newer calls got one number everywhere). */
const COMMON = {
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
};

export const ARCHES: Record<string, ArchTable> = {
  x64: {
    audit: 0xc000003e,
    denied: {
      ...COMMON,
      unshare: 272,
      setns: 308,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      kcmp: 312,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      chroot: 161,
      kexec_load: 246,
      kexec_file_load: 320,
      init_module: 175,
      finit_module: 313,
      delete_module: 176,
      create_module: 174,
      bpf: 321,
      perf_event_open: 298,
      userfaultfd: 323,
      open_by_handle_at: 304,
      name_to_handle_at: 303,
      quotactl: 179,
      swapon: 167,
      swapoff: 168,
      reboot: 169,
      syslog: 103,
      acct: 163,
      settimeofday: 164,
      clock_settime: 227,
      clock_adjtime: 305,
      adjtimex: 159,
      lookup_dcookie: 212,
      sethostname: 170,
      setdomainname: 171,
      vhangup: 153,
      iopl: 172,
      ioperm: 173,
      uselib: 134,
      ustat: 136,
      sysfs: 139,
      _sysctl: 156,
      nfsservctl: 180,
    },
    clone: 56,
    clone3: 435,
    openat2: 437,
    personality: 135,
    modes: [
      { name: 'chmod', nr: 90, mode: 1 },
      { name: 'fchmod', nr: 91, mode: 1 },
      { name: 'fchmodat', nr: 268, mode: 2 },
      { name: 'fchmodat2', nr: 452, mode: 2 },
      { name: 'creat', nr: 85, mode: 1 },
      { name: 'open', nr: 2, mode: 2, flags: 1 },
      { name: 'openat', nr: 257, mode: 3, flags: 2 },
      { name: 'mknod', nr: 133, mode: 1 },
      { name: 'mknodat', nr: 259, mode: 2 },
    ],
  },
  arm64: {
    audit: 0xc00000b7,
    denied: {
      ...COMMON,
      unshare: 97,
      setns: 268,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      kcmp: 272,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      chroot: 51,
      kexec_load: 104,
      kexec_file_load: 294,
      init_module: 105,
      finit_module: 273,
      delete_module: 106,
      bpf: 280,
      perf_event_open: 241,
      userfaultfd: 282,
      open_by_handle_at: 265,
      name_to_handle_at: 264,
      quotactl: 60,
      swapon: 224,
      swapoff: 225,
      reboot: 142,
      syslog: 116,
      acct: 89,
      settimeofday: 170,
      clock_settime: 112,
      clock_adjtime: 266,
      adjtimex: 171,
      lookup_dcookie: 18,
      sethostname: 161,
      setdomainname: 162,
      vhangup: 58,
      nfsservctl: 42,
    },
    clone: 220,
    clone3: 435,
    openat2: 437,
    personality: 92,
    modes: [
      { name: 'fchmod', nr: 52, mode: 1 },
      { name: 'fchmodat', nr: 53, mode: 2 },
      { name: 'fchmodat2', nr: 452, mode: 2 },
      { name: 'openat', nr: 56, mode: 3, flags: 2 },
      { name: 'mknodat', nr: 33, mode: 2 },
    ],
  },
};

/** Turns labelled lines into instructions; cBPF jumps only forward, at most 255 ahead. */
function assemble(lines: Line[]): Buffer {
  const at = new Map<string, number>();
  const insns: Insn[] = [];
  for (const line of lines) {
    if ('label' in line) at.set(line.label, insns.length);
    else insns.push(line);
  }
  const out = Buffer.alloc(insns.length * 8);
  insns.forEach((insn, index) => {
    const offset = (target: string | 0 | undefined): number => {
      if (!target) return 0;
      const to = at.get(target);
      if (to === undefined) throw new Error(`seccomp program: no label "${target}"`);
      const distance = to - index - 1;
      if (distance < 0 || distance > 255)
        throw new Error(`seccomp program: jump to "${target}" is ${distance} instructions away`);
      return distance;
    };
    out.writeUInt16LE(insn.code, index * 8);
    out.writeUInt8(offset(insn.jt), index * 8 + 2);
    out.writeUInt8(offset(insn.jf), index * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, index * 8 + 4);
  });
  return out;
}

const load = (offset: number): Insn => ({ code: BPF_LD_W_ABS, k: offset });
const ret = (value: number): Insn => ({ code: BPF_RET_K, k: value });
const jeq = (k: number, jt: string | 0, jf: string | 0 = 0): Insn => ({ code: BPF_JEQ_K, k, jt, jf });
const jset = (k: number, jt: string | 0, jf: string | 0 = 0): Insn => ({ code: BPF_JSET_K, k, jt, jf });

/**
 * The filter for `arch` (Node's process.arch): a `struct sock_filter[]` in the machine's
 * byte order, as bwrap reads it from its --seccomp fd. Other architectures are refused.
 */
export function seccompProgram(arch: string = process.arch): Buffer {
  const table = ARCHES[arch];
  if (!table) {
    throw new Error(
      `no seccomp filter for the ${arch} architecture (x64 and arm64 have one); the bwrap sandbox will not run without it`,
    );
  }
  const lines: Line[] = [load(ARCH), jeq(table.audit, 0, 'kill'), load(NR)];
  if (arch === 'x64') lines.push({ code: BPF_JGE_K, k: X32_SYSCALL_BIT, jt: 'deny', jf: 0 });
  for (const nr of Object.values(table.denied)) lines.push(jeq(nr, 'deny'));
  lines.push(
    jeq(table.clone3, 'enosys'),
    jeq(table.openat2, 'enosys'),
    jeq(table.clone, 'clone'),
    jeq(table.personality, 'personality'),
  );
  for (const call of table.modes) lines.push(jeq(call.nr, `mode-${call.name}`));
  lines.push(ret(SECCOMP_RET_ALLOW));
  // The checks of arguments, then the shared answers: cBPF jumps only forward.
  lines.push({ label: 'clone' }, load(arg(0)), jset(CLONE_NAMESPACE_FLAGS, 'deny', 'allow'));
  lines.push({ label: 'personality' }, load(arg(0)));
  for (const value of PERSONALITIES) lines.push(jeq(value, 'allow'));
  lines.push(ret(SECCOMP_RET_ERRNO | EPERM));
  for (const call of table.modes) {
    lines.push({ label: `mode-${call.name}` });
    // Without O_CREAT/O_TMPFILE open's mode is whatever was in the register: not a request.
    if (call.flags !== undefined) lines.push(load(arg(call.flags)), jset(O_CREATES, 0, 'allow'));
    lines.push(load(arg(call.mode)), jset(S_ISUID_ISGID, 'deny', 'allow'));
  }
  lines.push({ label: 'allow' }, ret(SECCOMP_RET_ALLOW));
  lines.push({ label: 'deny' }, ret(SECCOMP_RET_ERRNO | EPERM));
  lines.push({ label: 'enosys' }, ret(SECCOMP_RET_ERRNO | ENOSYS));
  lines.push({ label: 'kill' }, ret(SECCOMP_RET_KILL_PROCESS));
  return assemble(lines);
}
