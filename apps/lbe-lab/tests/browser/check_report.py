"""Opens report pages and figures in headless Chromium (Playwright) and
prints what a reader would see, as one JSON object on stdout, for
apps/lbe-lab/tests/report_in_browser.rs to assert on.

    python check_report.py CHROMIUM PAGE.html... [--svg FIGURE.svg...]

For each page, at a desktop width (1280 px) and at a phone's (390 px):
console errors and uncaught exceptions, failed requests, every figure (each
top-level <svg>) with its drawn size, its numeric tick labels along each
axis, its axis titles and how many plotted shapes it holds, the document's
scroll width against the viewport (horizontal overflow of the page), the
smallest computed font size of visible HTML text, and the smallest drawn
height of visible SVG text. Each --svg file is opened on its own and
reported the same way (its one figure).
"""

import json
import sys

from playwright.sync_api import sync_playwright

FIGURES_JS = r"""
() => {
  const isNum = (t) => /^-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?%?$/.test(t);
  const svgs = [...document.querySelectorAll('svg')].filter(
    (s) => !s.parentElement || !s.parentElement.closest('svg'));
  return svgs.map((svg) => {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].map((t) => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent.trim(), x: r.x + r.width / 2, y: r.y + r.height / 2,
               rotated: (t.getAttribute('transform') || '').includes('rotate') };
    }).filter((t) => t.text.length > 0);
    const nums = texts.filter((t) => isNum(t.text) && !t.rotated);
    // Tick labels on one axis share a coordinate: the x axis's their y, the
    // y axis's their x (rounded to a pixel).
    const groups = (key) => {
      const m = new Map();
      for (const t of nums) {
        const k = Math.round(t[key]);
        m.set(k, (m.get(k) || []).concat([t.text]));
      }
      return [...m.values()].sort((a, b) => b.length - a.length)[0] || [];
    };
    const shapes = [...svg.querySelectorAll('path, polyline, polygon, circle, rect')].filter((e) => {
      const r = e.getBoundingClientRect();
      const fill = e.getAttribute('fill');
      const stroke = e.getAttribute('stroke');
      const visible = (fill && fill !== 'none' && fill !== '#FFFFFF') ||
                      (stroke && stroke !== 'none' && stroke !== '#FFFFFF');
      return visible && (r.width > 0 || r.height > 0);
    });
    return {
      id: (svg.closest('figure') || svg).id || '',
      width: box.width, height: box.height,
      x_ticks: groups('y'), y_ticks: groups('x'),
      titles: texts.filter((t) => !isNum(t.text)).map((t) => t.text),
      shapes: shapes.length,
    };
  });
}
"""

LAYOUT_JS = r"""
() => {
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  let htmlMin = null, htmlMinText = '';
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!e || e.closest('svg') || !n.textContent.trim() || !visible(e)) continue;
    const size = parseFloat(getComputedStyle(e).fontSize);
    if (htmlMin === null || size < htmlMin) { htmlMin = size; htmlMinText = n.textContent.trim().slice(0, 40); }
  }
  let svgMin = null, svgMinText = '';
  for (const t of document.querySelectorAll('svg text')) {
    if (!t.textContent.trim() || !visible(t)) continue;
    // The drawn height of a glyph run: its font size times the figure's scale.
    const svg = t.ownerSVGElement;
    const vb = svg.viewBox && svg.viewBox.baseVal;
    const scale = vb && vb.width ? svg.getBoundingClientRect().width / vb.width : 1;
    const size = parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize) * scale;
    if (svgMin === null || size < svgMin) { svgMin = size; svgMinText = t.textContent.trim().slice(0, 40); }
  }
  return {
    viewport_width: window.innerWidth,
    scroll_width: document.documentElement.scrollWidth,
    body_scroll_width: document.body ? document.body.scrollWidth : 0,
    min_html_font_px: htmlMin, min_html_font_text: htmlMinText,
    min_svg_font_px: svgMin, min_svg_font_text: svgMinText,
  };
}
"""


def visit(browser, url, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    page.goto(url, wait_until="load")
    page.wait_for_timeout(200)
    out = {"width": width, "errors": errors, "title": page.title(),
           "figures": page.evaluate(FIGURES_JS), "layout": page.evaluate(LAYOUT_JS)}
    page.close()
    return out


def main(argv):
    chromium, rest = argv[1], argv[2:]
    pages = rest[: rest.index("--svg")] if "--svg" in rest else rest
    svgs = rest[rest.index("--svg") + 1:] if "--svg" in rest else []
    result = {"pages": [], "svgs": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox"])
        for path in pages:
            url = "file://" + path
            result["pages"].append({"path": path,
                                    "desktop": visit(browser, url, 1280),
                                    "phone": visit(browser, url, 390)})
        for path in svgs:
            result["svgs"].append({"path": path, **visit(browser, "file://" + path, 1280)})
        browser.close()
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main(sys.argv)
