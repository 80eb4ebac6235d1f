// Starts the real Flame window under WebDriver and hands a test a session on it.
//
// Each launch gets its own tauri-driver (which starts WebKitWebDriver, which starts Flame) on free
// ports, with FLAME_HOME set to the test's data directory, so tests never share state. When the
// test body fails, a screenshot of the window is saved under tests/e2e/artifacts/.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Builder, By, until, type WebDriver, type WebElement } from "selenium-webdriver";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ARTIFACTS = join(REPO, "tests/e2e/artifacts");

/** The app binary under test: $FLAME_APP, else the debug build. */
export const APP_BINARY = process.env["FLAME_APP"] ?? join(REPO, "target/debug/flame-desktop");

function tauriDriverPath(): string {
  const fromEnv = process.env["TAURI_DRIVER"];
  if (fromEnv !== undefined) return fromEnv;
  const cargoHome = process.env["CARGO_HOME"] ?? join(homedir(), ".cargo");
  return join(cargoHome, "bin/tauri-driver");
}

/** A port on 127.0.0.1 that nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") resolvePort(address.port);
        else reject(new Error("no port was assigned"));
      });
    });
  });
}

async function waitForDriver(port: number, driver: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (driver.exitCode !== null) {
      throw new Error(`tauri-driver exited with ${driver.exitCode}:\n${log()}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/status`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`tauri-driver did not answer on port ${port}:\n${log()}`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    child.once("exit", () => resolveStop());
    // SIGTERM, never SIGKILL: tauri-driver only stops its WebKitWebDriver child when asked nicely.
    child.kill("SIGTERM");
  });
}

export interface App {
  driver: WebDriver;
  /** The data directory this app was started on. */
  home: string;
  /** Waits for an element matching a CSS selector to be present and visible. */
  find(css: string): Promise<WebElement>;
}

export interface LaunchOptions {
  /**
   * Prepares the data directory inside `scratch` (a fresh temporary folder, removed afterwards)
   * and returns the path to use as FLAME_HOME. By default it is `scratch/home`, not yet created.
   */
  prepareHome?: (scratch: string) => Promise<string>;
  /**
   * Environment variables for the app besides FLAME_HOME, given the scratch folder; for example
   * XDG_CONFIG_HOME, where Flame's model settings are read on Linux.
   */
  env?: (scratch: string) => Promise<Record<string, string>>;
}

/**
 * Runs `body` against a freshly started Flame window and always tears it down. `name` names the
 * screenshot saved when `body` throws.
 */
export async function withApp(
  name: string,
  body: (app: App) => Promise<void>,
  options: LaunchOptions = {},
): Promise<void> {
  if (!existsSync(APP_BINARY)) {
    throw new Error(`${APP_BINARY} does not exist: build the app first (make build)`);
  }
  const scratch = await mkdtemp(join(tmpdir(), "flame-e2e-"));
  const home = options.prepareHome ? await options.prepareHome(scratch) : join(scratch, "home");
  const extraEnv = options.env ? await options.env(scratch) : {};
  const [port, nativePort] = [await freePort(), await freePort()];

  // The driver's and the app's output, its last MAX_OUTPUT characters: what a failure shows. One
  // launch (in a test that timed out and passed when retried) once wrote past the 512 MiB a
  // string may hold, and every chunk after that was an uncaught error that failed the whole run.
  let output = "";
  const keep = (text: string) => {
    output += text;
    if (output.length > 2 * MAX_OUTPUT) output = output.slice(-MAX_OUTPUT);
  };
  const tauriDriver = spawn(
    tauriDriverPath(),
    ["--port", String(port), "--native-port", String(nativePort)],
    {
      env: { ...process.env, ...extraEnv, FLAME_HOME: home, FLAME_LOG: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  tauriDriver.stdout?.on("data", (chunk: Buffer) => keep(chunk.toString()));
  tauriDriver.stderr?.on("data", (chunk: Buffer) => keep(chunk.toString()));
  tauriDriver.once("error", (err) => keep(`\nspawn failed: ${err.message}`));

  let driver: WebDriver | undefined;
  try {
    await waitForDriver(port, tauriDriver, () => output);
    driver = await new Builder()
      .usingServer(`http://127.0.0.1:${port}/`)
      .withCapabilities({ browserName: "wry", "tauri:options": { application: APP_BINARY } })
      .build();
    const session = driver;
    const app: App = {
      driver: session,
      home,
      async find(css) {
        const element = await session.wait(until.elementLocated(By.css(css)), 10_000);
        await session.wait(until.elementIsVisible(element), 10_000);
        return element;
      },
    };
    try {
      await body(app);
    } catch (err) {
      // Said first: what follows talks to a window that may no longer answer.
      console.error(
        `${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      await within(CLEANUP_MS, saveScreenshot(app, name, output), "the failure screenshot");
      throw err;
    }
  } finally {
    await within(CLEANUP_MS, driver?.quit() ?? Promise.resolve(), "closing the session");
    await stop(tauriDriver);
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * How long a failed test's screenshot and the session's close may take: a window that stopped
 * answering must not hold the test past vitest's timeout, which would hide why it failed.
 */
const CLEANUP_MS = 10_000;

/** How much of the driver's and the app's output a launch keeps, in characters: 1 Mi. */
const MAX_OUTPUT = 1 << 20;

/** `work`, or nothing once `ms` have passed (said on stderr): for cleanup that must not hang. */
async function within(ms: number, work: Promise<unknown>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((done) => {
    timer = setTimeout(() => {
      console.error(`${what} took over ${ms} ms and was left`);
      done();
    }, ms);
  });
  try {
    await Promise.race([work.then(() => undefined).catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function saveScreenshot(app: App, name: string, log: string): Promise<void> {
  const file = name.replace(/[^a-z0-9]+/gi, "-").toLowerCase();
  try {
    await mkdir(ARTIFACTS, { recursive: true });
    await writeFile(join(ARTIFACTS, `${file}.log`), log);
    await keepScreenshot(app, file);
    console.error(`saved tests/e2e/artifacts/${file}.png and .log`);
  } catch (err) {
    console.error(`could not save a screenshot for ${name}: ${String(err)}`);
  }
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Where the flame graph draws a frame, in viewport CSS pixels, once it is drawn. */
export async function rectOf(driver: WebDriver, id: string): Promise<Rect> {
  return driver.wait<Rect>(
    async () =>
      (await driver.executeScript<Rect | null>(
        "return window.__flameGraph ? window.__flameGraph.rectOf(arguments[0]) : null",
        id,
      )) ?? false,
    5_000,
    `frame ${id} is not drawn`,
  );
}

/** The text of what matches `css` now, read afresh (panes replace their elements): textContent,
 * not the rendered text, so a title cut short with an ellipsis still counts. */
export async function textOf(app: App, css: string): Promise<string> {
  const found = await app.driver.findElements(By.css(css));
  return (await found[0]?.getAttribute("textContent").catch(() => "")) ?? "";
}

/** Saves what the window shows as tests/e2e/artifacts/NAME.png, and returns it (base64 PNG). */
export async function keepScreenshot(app: App, name: string): Promise<string> {
  const folder = join(dirname(fileURLToPath(import.meta.url)), "artifacts");
  await mkdir(folder, { recursive: true });
  // WebKitWebDriver takes the screenshot after the page's next paint. The window paints without
  // the GPU (src-tauri/src/webkit.rs), and then a page with nothing to change paints nothing, so
  // the screenshot waits forever; one pixel changing by 1/255 every frame meanwhile gives it the
  // paint it waits for without showing in the picture.
  await app.driver.executeScript(`
    const pixel = document.createElement("div");
    pixel.id = "e2e-paint-pump";
    pixel.style.cssText = "position:fixed;left:0;top:0;width:1px;height:1px;pointer-events:none";
    document.body.append(pixel);
    let odd = false;
    window.__e2ePaintPump = setInterval(() => {
      odd = !odd;
      pixel.style.background = odd ? "rgba(0,0,0,0.004)" : "rgba(0,0,0,0.008)";
    }, 16);`);
  try {
    const shot = await app.driver.takeScreenshot();
    await writeFile(join(folder, `${name}.png`), shot, "base64");
    return shot;
  } finally {
    await app.driver.executeScript(`
      clearInterval(window.__e2ePaintPump);
      document.getElementById("e2e-paint-pump")?.remove();`);
  }
}
