// Preloaded (`node -r`) into the nightly section's runs on Linux: at exit, writes to stderr
// the CPU time (user + sys, ms) of the process's main thread and of the whole process, read
// from /proc. The nightly job waits on its main thread (libuv's and V8's threads run beside
// it): that thread's CPU is the figure a change to the job must lower, and it holds still
// under a load that moves the wall time.
'use strict';
const { readFileSync } = require('node:fs');

/** utime + stime of a /proc stat line, in ms (Linux counts them in ticks of 10 ms). */
const cpuMs = (path) => {
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

process.on('exit', () => {
  try {
    process.stderr.write(`bench-cpu: main ${cpuMs(`/proc/self/task/${process.pid}/stat`)} all ${cpuMs('/proc/self/stat')}\n`);
  } catch {
    // not Linux: the row goes without it
  }
});
