/**
 * Starts the real Ragline backend (fake model, temp data dir, sample corpus) and the built frontend
 * on free ports, for the end-to-end tests. Nothing is mocked: the browser talks to Next, Next to FastAPI.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const FRONTEND_DIR = path.resolve(__dirname, "../..");
export const REPO_ROOT = path.resolve(FRONTEND_DIR, "..");
/** Screenshots go to the ignored test-results folder; ./scripts/screenshots points this at docs/screenshots. */
export const SCREENSHOTS = process.env.RAGLINE_SCREENSHOTS_DIR
  ? path.resolve(process.env.RAGLINE_SCREENSHOTS_DIR)
  : path.join(FRONTEND_DIR, "test-results", "screenshots");
export const LOG_DIR = path.join(FRONTEND_DIR, "test-results", "servers");
const PYTHON = process.env.RAGLINE_PYTHON || path.join(REPO_ROOT, ".venv", "bin", "python");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, proc: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${url}: server exited with code ${proc.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
}

function backendEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // The parent's RAG_* settings (a developer's ollama setup, say) must not leak into the test servers.
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("RAG_")) delete env[key];
  // 20 tokens/s: an answer streams for a few seconds, so the live states stay observable on a loaded machine.
  const base = {
    RAG_LLM_BACKEND: "fake",
    RAG_FAKE_TOKENS_PER_SECOND: "20",
    RAG_DATA_DIR: dataDir,
    RAG_HOST: "127.0.0.1",
  };
  return Object.assign(env, base, extra);
}

/** A data dir holding the ingested sample corpus, made once and copied for each backend. */
export function ingestTemplate(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ragline-e2e-template-"));
  execFileSync(PYTHON, ["-m", "backend.cli", "ingest", "data/documents"], {
    cwd: REPO_ROOT,
    env: backendEnv(dir),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 180_000,
  });
  return dir;
}

function logStream(name: string): fs.WriteStream {
  fs.mkdirSync(LOG_DIR, { recursive: true });
  return fs.createWriteStream(path.join(LOG_DIR, `${name}.log`), { flags: "a" });
}

function launch(
  name: string,
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): ChildProcess {
  // Own process group, so stopping it also stops what it started (next start forks a server).
  const proc = spawn(cmd, args, { ...opts, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const log = logStream(name);
  proc.stdout?.pipe(log);
  proc.stderr?.pipe(log);
  return proc;
}

async function stopProcess(proc: ChildProcess | undefined, signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
  if (!proc?.pid || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  try {
    process.kill(-proc.pid, signal);
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-proc.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
}

export class Backend {
  private proc?: ChildProcess;
  constructor(
    readonly port: number,
    readonly dataDir: string,
    private readonly env: Record<string, string> = {},
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.proc = launch(`backend-${this.port}`, PYTHON, ["-m", "backend.cli", "serve"], {
      cwd: REPO_ROOT,
      env: backendEnv(this.dataDir, { RAG_PORT: String(this.port), ...this.env }),
    });
    await waitFor(`${this.url}/api/health`, this.proc, 90_000).catch(async (err) => {
      await this.stop();
      throw err;
    });
  }

  async stop(): Promise<void> {
    await stopProcess(this.proc);
    this.proc = undefined;
  }

  /** Kill it at once, as a crash or `kill -9` would: no stream is ended, the last tokens may not be logged. */
  async kill(): Promise<void> {
    await stopProcess(this.proc, "SIGKILL");
    this.proc = undefined;
  }
}

/** A backend on a free port over a copy of the ingested template. */
export async function startBackend(template: string, env: Record<string, string> = {}): Promise<Backend> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ragline-e2e-data-"));
  fs.cpSync(template, dataDir, { recursive: true });
  const backend = new Backend(await freePort(), dataDir, env);
  await backend.start();
  return backend;
}

export class Frontend {
  private proc?: ChildProcess;
  constructor(
    readonly port: number,
    readonly backendUrl: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!fs.existsSync(path.join(FRONTEND_DIR, ".next", "BUILD_ID"))) {
      throw new Error("frontend is not built: run `npm run build` in frontend/ first");
    }
    const next = path.join(FRONTEND_DIR, "node_modules", ".bin", "next");
    this.proc = launch(`frontend-${this.port}`, next, ["start", "-p", String(this.port), "-H", "127.0.0.1"], {
      cwd: FRONTEND_DIR,
      env: { ...process.env, BACKEND_URL: this.backendUrl, NEXT_TELEMETRY_DISABLED: "1" },
    });
    await waitFor(`${this.url}/`, this.proc, 60_000).catch(async (err) => {
      await this.stop();
      throw err;
    });
  }

  async stop(): Promise<void> {
    await stopProcess(this.proc);
  }
}

export async function startFrontend(backendUrl: string): Promise<Frontend> {
  const frontend = new Frontend(await freePort(), backendUrl);
  await frontend.start();
  return frontend;
}

export function removeDir(dir: string | undefined): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
