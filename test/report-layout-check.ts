/// <reference lib="dom" />
/**
 * The layout check of report.html, run inside headless Chromium: every text
 * a chart draws on its canvas (axis titles, tick labels, marker labels) is
 * recorded with its ink box as drawn (fillText wrapped before the page's
 * scripts run: the boxes are the browser's own measure, whoever drew them);
 * the legend's labels are read from the DOM. Both functions are passed to
 * puppeteer as they are, so they use nothing from outside their bodies.
 */

/** One text a chart drew: its ink box in page CSS pixels. */
export interface DrawnText {
  text: string;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

declare global {
  interface Window {
    __loadgenTexts?: Map<HTMLCanvasElement, DrawnText[]>;
  }
}

/**
 * For page.evaluateOnNewDocument: wraps CanvasRenderingContext2D.fillText
 * to record each text's ink box in canvas pixels (kept per canvas, and
 * forgotten when the canvas is cleared whole, as uPlot does before each redraw).
 */
export function installTextRecorder(): void {
  const texts = new Map<HTMLCanvasElement, DrawnText[]>();
  window.__loadgenTexts = texts;
  const proto = CanvasRenderingContext2D.prototype;
  const fillText = proto.fillText;
  const clearRect = proto.clearRect;
  proto.fillText = function (this: CanvasRenderingContext2D, text: string, x: number, y: number, maxWidth?: number) {
    const m = this.measureText(text);
    const t = this.getTransform();
    const xs = [x - m.actualBoundingBoxLeft, x + m.actualBoundingBoxRight];
    const ys = [y - m.actualBoundingBoxAscent, y + m.actualBoundingBoxDescent];
    const corners = xs.flatMap((cx) => ys.map((cy) => t.transformPoint(new DOMPoint(cx, cy))));
    const box: DrawnText = {
      text: String(text),
      left: Math.min(...corners.map((c) => c.x)),
      right: Math.max(...corners.map((c) => c.x)),
      top: Math.min(...corners.map((c) => c.y)),
      bottom: Math.max(...corners.map((c) => c.y)),
    };
    if (!texts.has(this.canvas)) texts.set(this.canvas, []);
    texts.get(this.canvas)!.push(box);
    if (maxWidth === undefined) fillText.call(this, text, x, y);
    else fillText.call(this, text, x, y, maxWidth);
  };
  proto.clearRect = function (this: CanvasRenderingContext2D, x: number, y: number, w: number, h: number) {
    if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) texts.set(this.canvas, []);
    clearRect.call(this, x, y, w, h);
  };
}

/**
 * For page.evaluate: what is wrong with the page's layout, one line each
 * (empty: nothing). Per chart: labels that intersect each other, a canvas
 * label inside the plot area (over the data, a grid, a marker line) or cut
 * at the canvas' edge, a chart wider than its box, a chart not drawn. Per
 * table: wider than its box unless it scrolls inside a box that fits, a
 * heading cell (a name) wrapped to more than 2 lines, a value to more than 3
 * in a column narrower than 40 % of the page's. The page
 * itself: no horizontal scroll.
 */
export function layoutProblems(): string[] {
  const problems: string[] = [];
  const slack = 0.5;
  const texts = window.__loadgenTexts ?? new Map<HTMLCanvasElement, DrawnText[]>();
  const intersects = (a: DrawnText, b: { left: number; top: number; right: number; bottom: number }): boolean =>
    Math.min(a.right, b.right) - Math.max(a.left, b.left) > slack && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > slack;
  const describe = (t: DrawnText): string =>
    `"${t.text}" [${Math.round(t.left)},${Math.round(t.top)}..${Math.round(t.right)},${Math.round(t.bottom)}]`;
  const main = document.querySelector('main')!;
  const mainBox = main.getBoundingClientRect();
  const mainStyle = getComputedStyle(main);
  const contentRight = mainBox.right - parseFloat(mainStyle.paddingRight);

  for (const plot of Array.from(document.querySelectorAll<HTMLElement>('.plot'))) {
    const id = plot.id;
    if (plot.getAttribute('data-rendered') !== '1') {
      problems.push(`${id}: not drawn`);
      continue;
    }
    const canvas = plot.querySelector('canvas');
    const over = plot.querySelector('.u-over');
    if (canvas === null || over === null) {
      problems.push(`${id}: no canvas`);
      continue;
    }
    const cbox = canvas.getBoundingClientRect();
    const scale = canvas.width / cbox.width;
    const onPage = (t: DrawnText): DrawnText => ({
      text: t.text,
      left: cbox.left + t.left / scale, right: cbox.left + t.right / scale,
      top: cbox.top + t.top / scale, bottom: cbox.top + t.bottom / scale,
    });
    const drawn = (texts.get(canvas) ?? []).filter((t) => t.text.trim() !== '').map(onPage);
    const area = over.getBoundingClientRect();
    for (const t of drawn) {
      if (intersects(t, area)) problems.push(`${id}: ${describe(t)} lies inside the plot area (over the data)`);
      if (t.left < cbox.left - slack || t.right > cbox.right + slack || t.top < cbox.top - slack || t.bottom > cbox.bottom + slack) {
        problems.push(`${id}: ${describe(t)} is cut at the chart's edge`);
      }
    }
    // The legend's labels and values, as laid out.
    const legend: DrawnText[] = [];
    for (const el of Array.from(plot.querySelectorAll('.u-legend .u-label, .u-legend .u-value'))) {
      const range = document.createRange();
      range.selectNodeContents(el);
      for (const r of Array.from(range.getClientRects())) {
        if (r.width > 0 && r.height > 0) legend.push({ text: el.textContent ?? '', left: r.left, right: r.right, top: r.top, bottom: r.bottom });
      }
    }
    const all = [...drawn, ...legend];
    for (let i = 0; i < all.length; i++) {
      for (let j = i + 1; j < all.length; j++) {
        if (intersects(all[i]!, all[j]!)) problems.push(`${id}: ${describe(all[i]!)} overlaps ${describe(all[j]!)}`);
      }
    }
    const box = plot.parentElement!.getBoundingClientRect();
    if (cbox.right > box.right + slack || cbox.left < box.left - slack) problems.push(`${id}: wider than its box`);
  }

  for (const table of Array.from(document.querySelectorAll<HTMLTableElement>('main table'))) {
    if (table.closest('.plot') !== null) continue;  // a chart's legend
    const name = table.className || table.closest('section,div[id]')?.id || table.querySelector('th')?.textContent || 'table';
    let container: HTMLElement | null = table.parentElement;
    while (container !== null && container !== main && !/(auto|scroll)/.test(getComputedStyle(container).overflowX)) container = container.parentElement;
    const tbox = table.getBoundingClientRect();
    if (container !== null && container !== main) {
      const sbox = container.getBoundingClientRect();
      if (sbox.right > contentRight + slack) problems.push(`table ${name}: its scroll box is wider than the page's column`);
    } else if (tbox.right > contentRight + slack) {
      problems.push(`table ${name}: ${Math.round(tbox.width)} px wide, overflows the page's column by ${Math.round(tbox.right - contentRight)} px`);
    }
    for (const cell of Array.from(table.querySelectorAll<HTMLTableCellElement>('th, td'))) {
      // The lines of the cell's own text (its row's height is the tallest cell's).
      const range = document.createRange();
      range.selectNodeContents(cell);
      const lines = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
      // A name (a heading cell) on 2 lines at most; a value past 3 only in a column of 40 % of the box (long text, not a squeezed column).
      const squeezed = cell.getBoundingClientRect().width < 0.4 * (contentRight - mainBox.left - parseFloat(mainStyle.paddingLeft));
      if (cell.tagName === 'TH' ? lines > 2 : lines > 3 && squeezed) {
        problems.push(`table ${name}: "${(cell.textContent ?? '').slice(0, 40)}" wraps to ${lines} lines`);
      }
    }
  }
  const overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  if (overflow > 0) problems.push(`the page scrolls sideways by ${overflow} px`);
  return problems;
}
