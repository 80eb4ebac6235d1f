// The flame graph's canvas and what it shows: the viewport (the span of the tree across the pane
// and the rows scrolled past), kept the size of the pane and repainted once per animation frame
// whatever asked for it.

import type { RefObject } from "preact";
import { useEffect, useLayoutEffect, useRef, useState, type MutableRef } from "preact/hooks";

import { recordPaint } from "./graph-hook";
import { graphContext, paint, type Scene, type Viewport } from "./render";

/** The narrowest span of the tree the view zooms to. */
const MIN_SPAN = 1e-9;

export interface GraphView {
  /** The pane the rows scroll in. */
  scroller: RefObject<HTMLDivElement>;
  canvas: RefObject<HTMLCanvasElement>;
  /** In a ref: panning and zooming repaint the canvas without re-rendering Preact. */
  view: MutableRef<Viewport>;
  /** The pane's height in CSS pixels, which the spacer under the canvas needs. */
  paneHeight: number;
  /** Paints the scene at the next animation frame (once, however often it is asked). */
  requestDraw: () => void;
  /** Shows the span from `x0` to `x1` of the tree's width, kept within it. */
  setView: (x0: number, x1: number) => void;
  /** Follows the pane's scrolling: the rows move under the canvas. */
  onScroll: () => void;
  /** Where a pointer event is on the canvas, in CSS pixels. */
  local: (event: { clientX: number; clientY: number }) => { x: number; y: number };
}

/** The canvas that paints `scene` (read at each paint), repainted after every render. */
export function useGraphView(scene: MutableRef<Scene | null>): GraphView {
  const scroller = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const view = useRef<Viewport>({ x0: 0, x1: 1, scrollTop: 0, width: 0, height: 0 });
  const drawQueued = useRef(false);
  const [paneHeight, setPaneHeight] = useState(0);

  const draw = () => {
    drawQueued.current = false;
    const c = canvas.current;
    const ctx = c ? graphContext(c) : null;
    if (!c || !ctx || !scene.current) return;
    const start = performance.now();
    paint(ctx, scene.current, view.current, window.devicePixelRatio || 1);
    recordPaint(ctx, start, scene.current.layout.count, scene.current.preview !== true);
  };
  const requestDraw = () => {
    if (drawQueued.current) return;
    drawQueued.current = true;
    requestAnimationFrame(draw);
  };

  // Keep the canvas the size of the visible pane, at the screen's pixel density. The rows scroll
  // under it: one canvas as tall as a deep tree would pass WebKitGTK's 32,767-pixel limit.
  useLayoutEffect(() => {
    const s = scroller.current;
    const c = canvas.current;
    if (!s || !c) return;
    const resize = () => {
      const dpr = window.devicePixelRatio || 1;
      const width = s.clientWidth;
      const height = s.clientHeight;
      view.current = { ...view.current, width, height, scrollTop: s.scrollTop };
      c.style.width = `${width}px`;
      c.style.height = `${height}px`;
      c.width = Math.round(width * dpr);
      c.height = Math.round(height * dpr);
      setPaneHeight(height);
      draw();
    };
    resize();
    const observer = new ResizeObserver(resize);
    observer.observe(s);
    return () => observer.disconnect();
  }, []);

  useEffect(requestDraw);

  const setView = (x0: number, x1: number) => {
    const span = Math.max(MIN_SPAN, Math.min(1, x1 - x0));
    const left = Math.min(Math.max(0, x0), 1 - span);
    view.current = { ...view.current, x0: left, x1: left + span };
    requestDraw();
  };

  const onScroll = () => {
    view.current = { ...view.current, scrollTop: scroller.current?.scrollTop ?? 0 };
    requestDraw();
  };

  const local = (event: { clientX: number; clientY: number }) => {
    const box = canvas.current!.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  };

  return { scroller, canvas, view, paneHeight, requestDraw, setView, onScroll, local };
}
