/**
 * CPU and memory of a server process (and any processes it forks), read from /proc while a
 * phase runs: CPU as utime+stime ticks over the phase, as % of one core; peak RSS as the
 * largest sum of VmRSS seen in samples taken every RSS_SAMPLE_MS. With several server
 * processes, both cover all of them: CPU summed, RSS the peak of the summed samples.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { RSS_SAMPLE_MS } from './options.js';

/** Re-scan /proc for new child processes this often (scanning is dearer than sampling). */
const TREE_RESCAN_MS = 1_000;

export interface ProcessUsage {
  /** utime+stime of the process tree over the phase, as % of one core (200 = both cores busy). */
  cpuPercent: number;
  /** The same utime+stime in seconds (of CPU, all processes of the tree summed). */
  cpuSeconds: number;
  /** Largest summed VmRSS of the process tree seen during the phase, in bytes. */
  peakRssBytes: number;
  /** Processes in the tree (the server and what it forked). */
  processes: number;
}

let clockTicksPerSecond: number | undefined;

function ticksPerSecond(): number {
  if (clockTicksPerSecond === undefined) {
    try {
      clockTicksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicksPerSecond = 100;
    }
  }
  return clockTicksPerSecond;
}

interface StatLine {
  ppid: number;
  cpuTicks: number;
}

/** Parses /proc/<pid>/stat; `comm` may hold spaces and parentheses, so split after the last ')'. */
export function parseStat(text: string): StatLine {
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); ppid is field 4, utime 14, stime 15.
  const ppid = Number(rest[1]);
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return { ppid, cpuTicks: utime + stime };
}

/** VmRSS in bytes from /proc/<pid>/status, 0 when absent (a zombie). */
export function parseRssBytes(statusText: string): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(statusText);
  return match?.[1] !== undefined ? Number(match[1]) * 1024 : 0;
}

function readStat(pid: number): StatLine | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

function readRss(pid: number): number {
  try {
    return parseRssBytes(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return 0;
  }
}

/** The root and every live descendant of it. */
export function processTree(rootPid: number): number[] {
  return processForest([rootPid]);
}

/** Every root and every live descendant of them (several servers, one /proc scan). */
export function processForest(rootPids: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat === undefined) continue;
    const list = children.get(stat.ppid);
    if (list === undefined) children.set(stat.ppid, [Number(entry)]);
    else list.push(Number(entry));
  }
  const tree = new Set<number>();
  const stack = [...rootPids];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (tree.has(pid)) continue;
    tree.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return [...tree];
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** A backend's title names its client: "… user db 127.0.0.1(41234) idle" or "… [local] …". */
const POSTGRES_CLIENT_MARK = /\(\d+\) |\[local\]/;

/**
 * The PostgreSQL processes that work for `database`: the backends connected to it, and the
 * cluster's own processes (postmaster, WAL writer, checkpointer, …), which serve every database.
 * Backends of other databases are left out.
 */
export function postgresProcesses(database: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (readText(`/proc/${entry}/comm`)?.trim() !== 'postgres') continue;
    const title = (readText(`/proc/${entry}/cmdline`) ?? '').replace(/\0/g, ' ');
    if (title.includes(` ${database} `) || !POSTGRES_CLIENT_MARK.test(title)) pids.push(Number(entry));
  }
  return pids;
}

/** CPU and peak RSS of a set of processes, found again by `discover` every TREE_RESCAN_MS. */
export class ProcessSampler {
  private readonly startTicks = new Map<number, number>();
  private readonly lastTicks = new Map<number, number>();
  private pids: number[] = [];
  private peakRss = 0;
  private startedAt = 0;
  private lastScanAt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly discover: () => number[]) {}

  start(): void {
    this.pids = this.discover();
    this.lastScanAt = Date.now();
    for (const pid of this.pids) {
      const stat = readStat(pid);
      if (stat !== undefined) {
        this.startTicks.set(pid, stat.cpuTicks);
        this.lastTicks.set(pid, stat.cpuTicks);
      }
    }
    this.startedAt = performance.now();
    this.sample();
    this.timer = setInterval(() => this.sample(), RSS_SAMPLE_MS);
    this.timer.unref();
  }

  private sample(): void {
    if (Date.now() - this.lastScanAt >= TREE_RESCAN_MS) {
      this.pids = this.discover();
      this.lastScanAt = Date.now();
    }
    let rss = 0;
    for (const pid of this.pids) {
      rss += readRss(pid);
      const stat = readStat(pid);
      if (stat === undefined) continue;
      // A process born during the phase counts from zero.
      if (!this.startTicks.has(pid)) this.startTicks.set(pid, 0);
      this.lastTicks.set(pid, stat.cpuTicks);
    }
    this.peakRss = Math.max(this.peakRss, rss);
  }

  stop(): ProcessUsage {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.sample();
    const elapsedS = (performance.now() - this.startedAt) / 1000;
    let ticks = 0;
    for (const [pid, last] of this.lastTicks) ticks += last - (this.startTicks.get(pid) ?? last);
    const cpuSeconds = ticks / ticksPerSecond();
    return {
      cpuPercent: elapsedS > 0 ? (100 * cpuSeconds) / elapsedS : 0,
      cpuSeconds,
      peakRssBytes: this.peakRss,
      processes: this.lastTicks.size,
    };
  }
}

interface CpuTimes {
  /** Ticks all CPUs spent on anything but idle and iowait. */
  busy: number;
  steal: number;
}

/** The aggregate `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal … */
export function parseCpuLine(procStat: string): CpuTimes {
  const line = procStat.split('\n', 1)[0] ?? '';
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return { busy: user + nice + system + irq + softirq + steal, steal };
}

function readCpuTimes(): CpuTimes {
  try {
    return parseCpuLine(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return { busy: 0, steal: 0 };
  }
}

/** CPU seconds the whole machine has been busy since boot (all CPUs; the `cpu` line of /proc/stat). */
export function machineBusySeconds(): number {
  return readCpuTimes().busy / ticksPerSecond();
}

export interface MachineUsage {
  /** CPU busy on the whole machine, as % of one core (200 = two cores busy). */
  busyPercent: number;
  /** Time the hypervisor gave our CPUs to someone else, as % of one core. */
  stealPercent: number;
}

/** Machine-wide CPU over a phase: shows when something else was running during the measurement. */
export class MachineSampler {
  private start: CpuTimes = { busy: 0, steal: 0 };
  private startedAt = 0;

  begin(): void {
    this.start = readCpuTimes();
    this.startedAt = performance.now();
  }

  end(): MachineUsage {
    const now = readCpuTimes();
    const elapsedS = (performance.now() - this.startedAt) / 1000;
    const perCore = (ticks: number): number => (elapsedS > 0 ? (100 * ticks) / ticksPerSecond() / elapsedS : 0);
    return { busyPercent: perCore(now.busy - this.start.busy), stealPercent: perCore(now.steal - this.start.steal) };
  }
}
