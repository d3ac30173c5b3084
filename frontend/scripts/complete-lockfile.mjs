#!/usr/bin/env node
/**
 * Adds lock entries for platform-specific optional packages that the registry mirror here does not serve
 * (e.g. @next/swc-darwin-arm64, @rollup/rollup-win32-x64-msvc). Without them `npm ci` refuses the lock
 * ("Missing: … from lock file") on every machine. Entries get name, version, os/cpu/libc and `optional`,
 * no integrity: npm skips them on other platforms and, where they apply, fetches them from the registry.
 * Run after `npm install` changes package-lock.json: `node scripts/complete-lockfile.mjs`.
 */
import fs from "node:fs";

const LOCK = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(fs.readFileSync(LOCK, "utf8"));
const packages = lock.packages;

const OS = ["darwin", "win32", "linux", "android", "freebsd", "openbsd", "openharmony", "netbsd", "sunos", "aix"];
const CPU = ["arm64", "x64", "ia32", "arm", "loong64", "ppc64", "riscv64", "s390x", "mips64el"];

function platform(name) {
  const parts = name.split("/").pop().split("-");
  const os = OS.find((o) => parts.includes(o));
  const cpu =
    CPU.find((c) => parts.includes(c)) ??
    (parts.includes("gnueabihf") || parts.includes("musleabihf") ? "arm" : undefined);
  if (!os || !cpu) return null;
  const libc = parts.some((p) => p.startsWith("musl"))
    ? "musl"
    : os === "linux" && parts.some((p) => p.startsWith("gnu"))
      ? "glibc"
      : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
}

let added = 0;
for (const [path, meta] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = path ? `${path}/node_modules/${dep}` : `node_modules/${dep}`;
    if (packages[base] || packages[`node_modules/${dep}`]) continue;
    const where = platform(dep);
    if (!where || !/^\d+\.\d+\.\d+/.test(version)) {
      console.warn(`skipped ${dep}@${version}: not a pinned platform package`);
      continue;
    }
    packages[`node_modules/${dep}`] = { version, ...where, optional: true };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(LOCK, JSON.stringify(lock, null, 2) + "\n");
console.log(`added ${added} platform entries to package-lock.json`);
