/**
 * `npm run bench:profile -- <profile or directory> [--phase <name>] [--top <n>]`: reads the CPU profiles of
 * `npm run bench -- --cpu-prof` (or any `.cpuprofile`) and prints, for each thread, the functions with the most
 * self time and the time per stage of a request (lib/profile-analysis.ts), cut to a phase's window when one is
 * named (the phases.json beside the profiles), per request when that phase's requests are known. See
 * bench/README.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  findPhase,
  PROFILES_DIR_NAME,
  profileFileInfo,
  profileFiles,
  readPhases,
  type PhasesFile,
  type PhaseWindow,
} from './lib/cpuprof.js';
import { positiveInteger } from './lib/options.js';
import {
  STAGE_NOTES,
  STAGES,
  selfTimes,
  stageTimes,
  topFrames,
  windowInside,
  type CpuProfile,
  type Stage,
  type TimeWindow,
} from './lib/profile-analysis.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_TOP = 25;
const EXIT_USAGE = 2;
/** Width of the stage notes printed under the tables. */
const NOTE_WIDTH = 100;

const USAGE = `Usage: npm run bench:profile -- <path> [--phase <name>] [--top <n>] [--no-notes]

  <path>          a .cpuprofile file, a server process's profile directory (with its phases.json), the
                  cpu-prof directory of a run (every server process in it) as npm run bench -- --cpu-prof
                  prints it, or the run's log directory above it
  --phase <name>  cut each profile to that phase's window (its name in the bench's table, e.g. events-1, or
                  scenario/phase); per request figures from the requests that process answered in it
  --top <n>       functions listed by self time (default ${DEFAULT_TOP})
  --no-notes      leave out what each stage covers
  --help          this text
`;

interface Target {
  /** A server process's directory (phases.json and its profiles), or a lone file's directory. */
  dir: string;
  files: string[];
  phases: PhasesFile | undefined;
}

/** The server directories (or the one file) a path names. */
function targets(path: string): Target[] {
  const full = resolve(path);
  if (!existsSync(full)) throw new Error(`${path}: no such file or directory`);
  if (statSync(full).isFile()) return [{ dir: dirname(full), files: [full], phases: readPhases(dirname(full)) }];
  const own = profileFiles(full);
  if (own.length > 0 || readPhases(full) !== undefined) return [{ dir: full, files: own, phases: readPhases(full) }];
  // A run's cpu-prof directory (one directory per server process), or the log directory holding it.
  const root = existsSync(join(full, PROFILES_DIR_NAME)) ? join(full, PROFILES_DIR_NAME) : full;
  const dirs = readdirSync(root)
    .map((name) => join(root, name))
    .filter((d) => statSync(d).isDirectory())
    .sort();
  const found = dirs.flatMap((d) => {
    const files = profileFiles(d);
    return files.length > 0 ? [{ dir: d, files, phases: readPhases(d) }] : [];
  });
  if (found.length === 0) throw new Error(`${path}: no .cpuprofile files in it or in its directories`);
  return found;
}

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const oneDecimal = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

function ms(us: number): string {
  return `${oneDecimal.format(us / 1000)} ms`;
}

function pct(part: number, of: number): string {
  return of > 0 ? `${((100 * part) / of).toFixed(1)}%` : '';
}

function perRequest(us: number, requests: number | undefined): string {
  return requests !== undefined && requests > 0 ? oneDecimal.format(us / requests) : '';
}

/** Columns padded to their widest cell; `right[i]` aligns column i to the right. */
function table(header: readonly string[], rows: readonly string[][], right: readonly boolean[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (right[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const head = line(header);
  return [`  ${head}`, `  ${'-'.repeat(head.length)}`, ...rows.map((r) => `  ${line(r)}`)];
}

/** `text` in lines of at most `width` characters, broken at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

function phaseName(p: PhaseWindow): string {
  return p.phase === p.scenario ? p.phase : `${p.scenario}/${p.phase}`;
}

function threadName(file: string): string {
  const info = profileFileInfo(basename(file));
  if (info === undefined) return basename(file);
  return `thread ${info.threadId}${info.threadId === 0 ? ' (main)' : ''}`;
}

interface ThreadStages {
  name: string;
  stages: Map<Stage, number>;
  busyUs: number;
}

function reportThread(
  file: string,
  profile: CpuProfile,
  window: TimeWindow | undefined,
  requests: number | undefined,
  top: number,
  out: string[],
): ThreadStages {
  const times = selfTimes(profile, window);
  const stages = stageTimes(profile, window);
  const idle = stages.get('idle') ?? 0;
  const busy = times.totalUs - idle;
  const name = threadName(file);
  out.push(
    '',
    `-- ${name}: ${basename(file)}`,
    `   ${whole.format(times.samples)} samples, ${ms(times.totalUs)} of the ${ms(times.windowUs)} window; ` +
      `busy (not idle) ${ms(busy)}${requests ? ` = ${perRequest(busy, requests)} µs/request` : ''}`,
  );
  if (window !== undefined && !windowInside(profile, window)) {
    out.push('   WARNING: the window is not inside this profile (another run, or another clock?)');
  }
  if (busy <= 0) {
    // A thread with nothing to do here (tsx's module loader thread, once the modules are loaded).
    out.push('   idle throughout');
    return { name, stages, busyUs: 0 };
  }
  out.push('', `   Top ${top} functions by self time:`);
  const frames = topFrames(profile, window, REPO_ROOT).slice(0, top);
  out.push(
    ...table(
      ['% window', 'µs/req', 'stage', 'function', 'location'],
      frames.map((f) => [
        pct(f.selfUs, times.windowUs),
        perRequest(f.selfUs, requests),
        f.stage,
        f.functionName,
        f.location,
      ]),
      [true, true, false, false, false],
    ),
  );
  out.push('', '   Time per stage (each sample to the innermost frame a rule classifies):');
  out.push(
    ...table(
      ['stage', '% window', '% busy', 'µs/req', 'ms'],
      [
        ...STAGES.map((s) => {
          const us = stages.get(s) ?? 0;
          return [s, pct(us, times.windowUs), s === 'idle' ? '' : pct(us, busy), perRequest(us, requests), ms(us)];
        }),
        ['total', pct(times.totalUs, times.windowUs), '', perRequest(busy, requests), ms(times.totalUs)],
      ],
      [false, true, true, true, true],
    ),
  );
  return { name, stages, busyUs: busy };
}

/** The stages of every thread of one process side by side, and their sum against the process's /proc CPU. */
function reportProcess(
  threads: readonly ThreadStages[],
  phase: PhaseWindow | undefined,
  windowUs: number,
  out: string[],
): void {
  const requests = phase?.requests;
  const unit = requests ? 'µs/req' : 'ms';
  const cell = (us: number): string => (requests ? perRequest(us, requests) : oneDecimal.format(us / 1000));
  const sum = (s: Stage): number => threads.reduce((total, t) => total + (t.stages.get(s) ?? 0), 0);
  const busy = STAGES.filter((s) => s !== 'idle').reduce((total, s) => total + sum(s), 0);
  out.push('', `-- the ${threads.length} busy threads of the process, ${unit} (% of one core over the window):`);
  out.push(
    ...table(
      ['stage', ...threads.map((t) => t.name), 'all', '% core'],
      [
        ...STAGES.filter((s) => s !== 'idle').map((s) => [
          s,
          ...threads.map((t) => cell(t.stages.get(s) ?? 0)),
          cell(sum(s)),
          pct(sum(s), windowUs),
        ]),
        ['busy', ...threads.map((t) => cell(t.busyUs)), cell(busy), pct(busy, windowUs)],
      ],
      [false, ...threads.map(() => true), true, true],
    ),
  );
  if (phase !== undefined) {
    out.push(
      `   the process's CPU over the window from /proc (every thread): ${cell(phase.processCpuUs)} ${unit} ` +
        `(${pct(phase.processCpuUs, windowUs)} of a core).`,
      '   A profile counts a thread blocked inside a call (an fsync in COMMIT) as busy, and does not see the',
      "   threads it does not profile (libuv's pool, V8's helpers): the two need not agree.",
    );
  }
}

function main(argv: readonly string[]): number {
  let values: { phase?: string; top?: string; help?: boolean; 'no-notes'?: boolean };
  let positionals: string[];
  let top: number;
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        phase: { type: 'string' },
        top: { type: 'string' },
        'no-notes': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (positionals.length !== 1) throw new Error('one profile file or directory, please');
    top = values.top === undefined ? DEFAULT_TOP : positiveInteger('--top', values.top);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  const out: string[] = [];
  for (const target of targets(positionals[0] as string)) {
    const server = target.phases?.server;
    out.push(
      '',
      `== ${server === undefined ? target.dir : `${server.label} (pid ${server.pid}, ${server.db})`}: ${target.dir}`,
    );
    const phases = target.phases?.phases ?? [];
    let phase: PhaseWindow | undefined;
    if (values.phase !== undefined) {
      phase = findPhase(phases, values.phase);
      if (phase === undefined) {
        const known = phases.map(phaseName).join(', ');
        out.push(`   no phase ${values.phase} here${known === '' ? ' (no phases.json)' : `; its phases: ${known}`}`);
        continue;
      }
      const events =
        phase.events !== undefined && phase.eventsPerRequest > 1 ? ` (${whole.format(phase.events)} events)` : '';
      out.push(
        `   phase ${phaseName(phase)}: window ${ms(phase.endUs - phase.startUs)}; this process answered ` +
          `${whole.format(phase.requests)} requests${events}` +
          (phase.servers > 1
            ? ` of the phase's ${whole.format(phase.phaseRequests)} over ${phase.servers} servers`
            : '') +
          `; its CPU (/proc, every thread) ${ms(phase.processCpuUs)} = ` +
          `${perRequest(phase.processCpuUs, phase.requests)} µs/request`,
      );
    } else if (phases.length > 0) {
      const known = phases.map(phaseName).join(', ');
      out.push(`   the whole profile (setup and warm-up included); --phase cuts it to one of: ${known}`);
    }
    const window = phase === undefined ? undefined : { startUs: phase.startUs, endUs: phase.endUs };
    const threads: ThreadStages[] = [];
    for (const file of target.files) {
      const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
      threads.push(reportThread(file, profile, window, phase?.requests, top, out));
    }
    const busyThreads = threads.filter((t) => t.busyUs > 0);
    if (busyThreads.length > 1 && window !== undefined) {
      reportProcess(busyThreads, phase, window.endUs - window.startUs, out);
    }
  }
  if (!values['no-notes']) {
    out.push('', 'Stages (the rules: STAGE_RULES in bench/lib/profile-analysis.ts):');
    for (const s of STAGES)
      out.push(...wrap(STAGE_NOTES[s], NOTE_WIDTH).map((l, i) => `  ${(i === 0 ? s : '').padEnd(13)}${l}`));
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench:profile: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
