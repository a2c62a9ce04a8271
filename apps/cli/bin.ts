#!/usr/bin/env node
/** The `claw` executable. All logic lives in main.ts so tests can call it in-process. */
import { main } from './main.js';

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`claw: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
