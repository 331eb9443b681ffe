(() => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  const describe = el => {
    const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '';
    return `<${el.tagName.toLowerCase()}${cls}> "${(el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 50)}"`;
  };
  const hidden = el => el.closest('details:not([open])') && !el.closest('summary');
  const shown = el => {
    if (hidden(el)) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const overlap = (a, b) =>
    a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const textBox = el => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return range.getBoundingClientRect();
  };
  const fmt = r => `[${Math.round(r.left)}..${Math.round(r.right)} x ${Math.round(r.top)}..${Math.round(r.bottom)}]`;

  // 1. The page never scrolls sideways; wide tables scroll inside their own box.
  const page = document.documentElement.scrollWidth;
  if (page > vw + 1) problems.push(`the page is ${page}px wide in a ${vw}px window`);
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('.scroll') || !shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right > vw + 1 || r.left < -1) problems.push(`outside the window ${fmt(r)}: ${describe(el)}`);
  }
  // 2. No text is cut off by its box.
  for (const el of document.body.querySelectorAll('*')) {
    if (!shown(el) || el.closest('svg') || el.closest('.scroll')) continue;
    const style = getComputedStyle(el);
    if (style.overflowX === 'visible' && style.textOverflow !== 'ellipsis') continue;
    if (el.classList.contains('scroll')) continue;
    if (el.scrollWidth > el.clientWidth + 1) problems.push(`text cut off: ${describe(el)}`);
  }
  // 3. Chart rows: label, track and value apart; bars, whiskers and gate marks inside the
  //    track and clear of the value and label text; axis labels clear of each other.
  for (const row of document.querySelectorAll('.irow, .crow')) {
    if (!shown(row)) continue;
    const label = row.querySelector('.ilabel, .clabel');
    const value = row.querySelector('.ivalue, .cvalue');
    const track = row.querySelector('.itrack, .ctrack');
    const texts = [label, value].filter(e => e && e.textContent.trim()).map(textBox);
    const t = track.getBoundingClientRect();
    for (const mark of row.querySelectorAll('.ibar, .iwhisker, .igate, .cbar')) {
      const m = mark.getBoundingClientRect();
      if (m.left < t.left - 1.5 || m.right > t.right + 1.5) problems.push(`a mark leaves its track ${fmt(m)} vs ${fmt(t)}: ${describe(row)}`);
      for (const box of texts) if (overlap(m, box)) problems.push(`a mark ${describe(mark)} overlaps text ${fmt(box)}: ${describe(row)}`);
    }
    if (texts.length === 2 && overlap(texts[0], texts[1])) problems.push(`label and value overlap: ${describe(row)}`);
    const ticks = [...row.querySelectorAll('.tick')].map(textBox);
    for (let i = 1; i < ticks.length; i++) if (overlap(ticks[i - 1], ticks[i])) problems.push(`axis labels overlap: ${describe(row)}`);
  }
  // 4. Histograms: every text inside its chart, no two texts overlapping.
  for (const svg of document.querySelectorAll('svg.chart')) {
    if (!shown(svg)) continue;
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].map(el => [el, el.getBoundingClientRect()]);
    for (const [el, r] of texts) {
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        problems.push(`chart text outside its chart ${fmt(r)} vs ${fmt(box)}: "${el.textContent}"`);
    }
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (overlap(texts[i][1], texts[j][1])) problems.push(`chart texts overlap: "${texts[i][0].textContent}" and "${texts[j][0].textContent}"`);
  }
  // 5. The two sides of a pair do not overlap.
  for (const sides of document.querySelectorAll('.sides')) {
    const [a, b] = [...sides.children].map(e => e.getBoundingClientRect());
    if (a && b && overlap(a, b)) problems.push(`the sides of a pair overlap: ${describe(sides)}`);
  }
  return {
    problems,
    measured: {
      width: vw,
      pageWidth: page,
      charts: document.querySelectorAll('.ichart, .cchart, svg.chart').length,
      rows: document.querySelectorAll('.irow, .crow').length,
      texts: document.querySelectorAll('svg.chart text').length,
    },
  };
})()
