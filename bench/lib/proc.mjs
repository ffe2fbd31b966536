// Memory of processes, read from /proc, and a sampler that records it every second.
import fs from 'node:fs';
import { mib, round } from './util.mjs';

/** VmRSS and VmHWM (peak RSS) of one process in kB; null when it is gone. */
export function statusKb(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return null;
  }
}

/** Proportional set size in kB: shared pages split between their users (PostgreSQL's backends share a lot). */
export function pssKb(pid) {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+) kB/m)?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

export function allProcesses() {
  const list = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      list.push({
        pid: Number(entry),
        ppid,
        cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '),
      });
    } catch {
      // Gone meanwhile.
    }
  }
  return list;
}

/** A process and all its descendants. */
export function tree(rootPid, processes = allProcesses()) {
  const pids = [rootPid];
  for (let i = 0; i < pids.length; i++) for (const p of processes) if (p.ppid === pids[i]) pids.push(p.pid);
  return pids;
}

/** Memory of a group of processes: sums of RSS (double-counts shared pages), PSS (does not) and peak RSS, in MiB. */
export function memoryOf(pids) {
  const one = pids
    .map((pid) => ({ pid, ...statusKb(pid), pss: pssKb(pid) }))
    .filter((p) => p.rss != null && !Number.isNaN(p.rss));
  if (one.length === 0) return null;
  const sum = (key) => one.reduce((total, p) => total + (Number.isNaN(p[key]) ? 0 : p[key]), 0);
  return { processes: one.length, rssMiB: mib(sum('rss')), pssMiB: mib(sum('pss')), peakRssMiB: mib(sum('hwm')) };
}

/**
 * Samples every `everyMs` the memory of named processes: `single` ones (a Node process: its own RSS, not
 * its children's — the worker's makers are not the worker) and `trees` (PostgreSQL's postmaster and its
 * backends, the Temporal CLI and what it started: PSS of the whole tree). stop() gives peak and final.
 */
export function startMemorySampler({ single = {}, trees = {} }, everyMs = 1000) {
  const peak = {};
  let last = {};
  let samples = 0;
  const take = () => {
    const processes = Object.keys(trees).length ? allProcesses() : [];
    const now = {};
    for (const [name, pid] of Object.entries(single)) {
      const kb = pid ? statusKb(pid) : null;
      if (kb) now[name] = mib(kb.rss);
    }
    for (const [name, pid] of Object.entries(trees)) {
      const m = pid ? memoryOf(tree(pid, processes)) : null;
      if (m) now[name] = m.pssMiB;
    }
    for (const [name, value] of Object.entries(now)) peak[name] = Math.max(peak[name] ?? 0, value);
    last = now;
    samples += 1;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    /** Points a name at another process (a restarted worker). */
    track(name, pid) {
      if (name in single) single[name] = pid;
      else trees[name] = pid;
    },
    stop() {
      clearInterval(timer);
      take();
      const names = [...new Set([...Object.keys(single), ...Object.keys(trees)])];
      const unit = (name) => (name in single ? 'RSS MiB' : 'PSS MiB (process tree)');
      return {
        samples,
        everyMs,
        processes: Object.fromEntries(
          names.map((n) => [n, { measure: unit(n), peak: peak[n] ?? null, final: last[n] ?? null }]),
        ),
      };
    },
  };
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds used so far by this process and everything it started (live, or exited and reaped). */
function ownCpuSeconds() {
  return treeCpuSeconds(process.pid);
}

/** CPU seconds used so far by a process and everything it started (live, or exited and reaped). */
export function treeCpuSeconds(rootPid) {
  let ticks = 0;
  for (const pid of tree(rootPid)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime, cutime, cstime: fields 14–17 of stat, counted from the state (field 3) here.
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/**
 * The whole machine's CPU time so far in core-seconds, from /proc/stat's first line (cpu user nice system
 * idle iowait irq softirq steal): busy (not idle, not waiting for I/O), waiting for I/O, and all of it.
 */
export function machineCpuSeconds() {
  const [, user, nice, system, idle, iowait, irq, softirq, steal] = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return {
    busy: busy / TICKS_PER_SECOND,
    iowait: iowait / TICKS_PER_SECOND,
    all: (busy + idle + iowait) / TICKS_PER_SECOND,
  };
}

/**
 * Tells how much CPU other work on the machine took while a bench ran — the load average alone cannot,
 * since it counts the bench's own processes too. stop() gives core-seconds: the machine's, the bench's
 * (with the service it started), and the rest.
 */
export function startCpuAccount() {
  const machineAtStart = machineCpuSeconds().busy;
  const ownAtStart = ownCpuSeconds();
  const startedAt = Date.now();
  return () => {
    const seconds = (Date.now() - startedAt) / 1000;
    const busy = machineCpuSeconds().busy - machineAtStart;
    const own = ownCpuSeconds() - ownAtStart;
    return {
      seconds: round(seconds),
      machineBusyCoreSeconds: round(busy),
      benchCoreSeconds: round(own),
      otherCoreSeconds: round(Math.max(0, busy - own)),
    };
  };
}
