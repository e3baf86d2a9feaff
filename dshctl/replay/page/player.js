// dshctl replay page: plays the session embedded in this file at its recorded timing.
// Everything from the log is inserted as text (textContent, Text nodes), never as markup.
(() => {
  'use strict';

  const FORMAT = 'dshctl-replay-html/1';
  const MIN_SPEED = 1 / 64;
  const MAX_SPEED = 2048;
  const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
  const IDLES = [0, 0.5, 1, 2, 5, 10, 30];
  const SEEK_SECONDS = 5;
  const COLLAPSE_LINES = 12;
  const MAX_HITS = 100000;
  const HIGHLIGHT_WINDOW = 300;
  const EPSILON = 1e-9;

  const $ = (id) => document.getElementById(id);
  const notice = $('notice');
  const reducedMotion = window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;

  function say(text) {
    notice.textContent = text;
    notice.hidden = !text;
  }

  // ------------------------------------------------------------------------------------------------
  // Loading: base64 → inflate → JSON

  function base64Bytes(text) {
    if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  async function load() {
    if (typeof DecompressionStream !== 'function') {
      say('This browser cannot open this page: the session is stored compressed, and the browser lacks ' +
          'DecompressionStream (Chrome or Edge 80+, Firefox 113+, Safari 16.4+ have it).');
      return;
    }
    let data;
    try {
      const source = $('dshctl-data');
      const bytes = base64Bytes(source.textContent.replace(/\s+/g, ''));
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
      data = JSON.parse(await new Response(stream).text());
    } catch (error) {
      say('This page is damaged: its session data cannot be read (' + error + ').');
      return;
    }
    if (!data || data.format !== FORMAT) {
      say('This page holds data of another format than this player reads (' + FORMAT + ').');
      return;
    }
    await glyphsLoaded();
    const replay = new Replay(data);
    replay.start();
  }

  // The page's own font of the symbols common fonts lack (the stop sign, control pictures), loaded
  // before any text goes in: Chromium keeps a box for text it laid out while that font was loading.
  // It is a data: URL, so this takes milliseconds; a browser that cannot load it goes on without.
  function glyphsLoaded() {
    if (!document.fonts || typeof document.fonts.load !== 'function') return Promise.resolve();
    const font = '16px "dshctl glyphs"';
    return Promise.race([document.fonts.load(font, '\u23f9\u241b').catch(() => null),
                         new Promise((resolve) => setTimeout(resolve, 1000))]);
  }

  // ------------------------------------------------------------------------------------------------
  // Small helpers

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null && text !== '') node.textContent = text;
    return node;
  }

  function segmentsNode(tag, className, segments) {
    const node = el(tag, className);
    for (const [text, style] of segments || []) {
      if (style) node.appendChild(el('span', 's-' + style, text));
      else node.appendChild(document.createTextNode(text));
    }
    return node;
  }

  function segmentsText(segments) {
    let out = '';
    for (const [text] of segments || []) out += text;
    return out;
  }

  function countLines(text) {
    if (!text) return 0;
    let lines = 1;
    let at = -1;
    while ((at = text.indexOf('\n', at + 1)) >= 0) lines++;
    if (text.endsWith('\n')) lines--;
    return lines;
  }

  function clock(seconds) {
    const total = Math.max(0, Math.floor(seconds + EPSILON));
    const h = Math.floor(total / 3600);
    const m = Math.floor((total % 3600) / 60);
    const s = total % 60;
    const two = (v) => (v < 10 ? '0' : '') + v;
    return (h ? h + ':' + two(m) : two(m)) + ':' + two(s);
  }

  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return clock(ms / 1000);
  }

  function count(value) {
    return Number(value).toLocaleString('en-US');
  }

  function money(value, currency) {
    const amount = value >= 1 || value === 0 ? Number(value).toFixed(2) : String(Number(Number(value).toPrecision(2)));
    return currency === 'USD' ? '$' + amount : amount + ' ' + currency;
  }

  function upperBound(array, value) {
    // the number of elements ≤ value in a sorted array
    let low = 0;
    let high = array.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (array[mid] <= value) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  function lowerBound(array, value) {
    let low = 0;
    let high = array.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (array[mid] < value) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }

  async function copyText(text, button) {
    let done = false;
    try {
      await navigator.clipboard.writeText(text);
      done = true;
    } catch (error) {
      const area = el('textarea', 'offscreen');
      area.value = text;
      document.body.appendChild(area);
      area.select();
      try { done = document.execCommand('copy'); } catch (ignored) { done = false; }
      area.remove();
    }
    if (button) {
      button.textContent = done ? 'copied' : 'copy failed';
      setTimeout(() => { button.textContent = 'copy'; }, 1200);
    }
  }

  // ------------------------------------------------------------------------------------------------
  // The model: fragments, their clock, items, blocks

  class Model {
    constructor(data) {
      this.data = data;
      const dt = data.dt;
      this.count = dt.length;
      this.items = data.items;
      this.starts = new Int32Array(this.items.length);
      this.blocks = (data.blocks || []).map(([type, seq, index]) => ({
        type, seq, index, text: '', runs: [], first: -1, last: -1, end: 0, node: null,
      }));
      this.turns = [];
      this.tools = [];
      this.quiet = new Uint8Array(this.count);
      const ends = this.indexItems();
      this.unitEnds = Int32Array.from(new Set(ends)).sort();
      this.turnPositions = Int32Array.from(this.turns.map((turn) => turn.fragment + 1));
      this.toolPositions = Int32Array.from(this.tools.map((fragment) => fragment + 1));
      this.setIdleLimit(data.idle);
    }

    // Each item's place: its start, its run's cumulative lengths, its block's text and extent, the turns,
    // the tool calls and the fragments that show nothing. Returns where each unit (event, block) ends.
    indexItems() {
      const texts = this.blocks.map(() => []);
      const lengths = this.blocks.map(() => 0);
      const ends = [];
      this.items.forEach((item, i) => {
        this.starts[i] = item.s;
        const n = item.n || 1;
        if (item.l) item.cum = this.runEnds(item);
        if (item.b !== undefined) {
          const block = this.blocks[item.b];
          if (block.first < 0) block.first = i;
          block.last = i;
          block.end = Math.max(block.end, item.s + n);
          if (item.l) {
            item.off = lengths[item.b];
            lengths[item.b] += item.x.length;
            texts[item.b].push(item.x);
            block.runs.push(i);
          }
        } else {
          ends.push(item.s + n);
        }
        if (item.k === 'turn') this.turns.push({ turn: item.u, item: i, fragment: item.s });
        if (item.k === 'tool-call') this.tools.push(item.s);
        if (item.k === 'block-end' || (item.k === 'tool-end' && item.end === 'closed' && !item.foot)) this.quiet[item.s] = 1;
      });
      this.blocks.forEach((block, b) => {
        block.text = texts[b].join('');
        ends.push(block.end);
      });
      return ends;
    }

    // a run's text length after each of its fragments (an empty delta shows nothing: quiet)
    runEnds(item) {
      const cum = new Int32Array(item.l.length);
      let total = 0;
      item.l.forEach((length, k) => {
        total += length;
        cum[k] = total;
        if (!length) this.quiet[item.s + k] = 1;
      });
      return cum;
    }

    // dshctl's PlaybackClock rule (dshctl/replay/transform.py): playback seconds of each fragment
    // from fragment 0, every gap longer than the idle limit capped to it (0: no cap).
    setIdleLimit(idle) {
      this.idle = idle;
      const cap = idle > 0 ? idle * 1000 : null;
      const at = new Float64Array(this.count);
      const dt = this.data.dt;
      let total = 0;
      for (let i = 0; i < this.count; i++) {
        let gap = i ? dt[i] : 0;
        if (gap > 0) {
          if (cap !== null && gap > cap) gap = cap;
          total += gap / 1000;
        }
        at[i] = total;
      }
      this.at = at;
      this.duration = this.count ? at[this.count - 1] : 0;
    }

    // fragments due at playback time t (their time ≤ t)
    due(t) {
      return upperBound(this.at, t + EPSILON);
    }

    // the time the screen at position p shows: the last fragment shown's
    timeOf(position) {
      return position > 0 ? this.at[Math.min(position, this.count) - 1] : 0;
    }

    // the item holding fragment f
    itemAt(fragment) {
      return upperBound(this.starts, fragment) - 1;
    }

    turnAt(position) {
      const i = upperBound(this.turnPositions, position) - 1;
      return i >= 0 ? this.turns[i] : null;
    }

    // the position just after the fragment of block b that completes its character `end`
    blockPosition(b, end) {
      const block = this.blocks[b];
      let low = 0;
      let high = block.runs.length - 1;
      while (low < high) {  // the last run starting before `end`
        const mid = (low + high + 1) >>> 1;
        if (this.items[block.runs[mid]].off < end) low = mid;
        else high = mid - 1;
      }
      const item = this.items[block.runs[low]];
      const k = lowerBound(item.cum, end - item.off);
      return item.s + Math.min(k, item.n - 1) + 1;
    }
  }

  // ------------------------------------------------------------------------------------------------
  // The view: one DOM node per event, one per content block (growing as its fragments arrive)

  class Screen {
    constructor(model, root) {
      this.model = model;
      this.root = root;
      this.position = 0;
      this.sections = [];
      this.nodes = new Map(); // item index -> its node (events and blocks' first items)
      this.live = null;
      this.prelude = el('section', 'prelude');
      root.appendChild(this.prelude);
      this.images = model.data.im || {};
      this.figures = model.data.fig || {};
    }

    parent() {
      return this.sections.length ? this.sections[this.sections.length - 1] : this.prelude;
    }

    // show exactly the first `target` fragments
    show(target) {
      const model = this.model;
      target = Math.max(0, Math.min(target, model.count));
      const before = this.position;
      if (target === before) return;
      const dirty = new Set();
      const items = model.items;
      if (target > before) {
        for (let i = Math.max(model.itemAt(before), 0); i < items.length && items[i].s < target; i++) {
          const item = items[i];
          if (item.s >= before) this.enter(i);
          if (item.l) {
            const block = model.blocks[item.b];
            block.want = item.off + item.cum[Math.min(target - item.s, item.n) - 1];
            dirty.add(block);
          }
        }
      } else {
        for (let i = model.itemAt(before - 1); i >= 0 && items[i].s + (items[i].n || 1) > target; i--) {
          const item = items[i];
          if (item.l) {
            const block = model.blocks[item.b];
            block.want = item.s >= target ? item.off : item.off + item.cum[target - item.s - 1];
            dirty.add(block);
          }
          if (item.s >= target) this.leave(i);
        }
      }
      this.position = target;
      for (const block of dirty) if (block.node) this.setLength(block, block.want);
      let live = null;
      if (target > 0) {
        const last = items[model.itemAt(target - 1)];
        if (last.l) {
          const block = model.blocks[last.b];
          if (block.node && block.end > target) live = block;
        }
      }
      this.setLive(live);
    }

    setLive(block) {
      if (this.live === block) return;
      if (this.live && this.live.node) {
        this.live.node.classList.remove('live');
        this.updateCollapse(this.live.node);
      }
      this.live = block;
      if (block && block.node) {
        block.node.classList.add('live');
        this.updateCollapse(block.node);
      }
    }

    setLength(block, want) {
      const shown = block.shown || 0;
      const text = block.textNode;
      if (want > shown) {
        const added = block.text.slice(shown, want);
        text.appendData(added);
        block.breaks += countBreaks(added);
      } else if (want < shown) {
        text.deleteData(want, shown - want);
        block.breaks = countBreaks(text.data);
      } else {
        return;
      }
      block.shown = want;
      const data = text.data;
      block.node.dataset.lines = String(block.breaks + (data && !data.endsWith('\n') ? 1 : 0));
      this.updateCollapse(block.node);
    }

    enter(i) {
      const model = this.model;
      const item = model.items[i];
      const kind = item.k;
      if (item.drop) this.droppedBy(item, true);
      if (item.b !== undefined) {
        const block = model.blocks[item.b];
        if (!block.node) this.openBlock(block, i);
        this.blockItem(block, item);
        return;
      }
      let node;
      if (kind === 'turn') {
        node = this.turnSection(item);
        this.root.appendChild(node);
        this.sections.push(node);
        this.nodes.set(i, node);
        return;
      }
      if (kind === 'user') node = this.prompt(item);
      else if (kind === 'tool-result') node = this.result(item);
      else node = segmentsNode('div', 'ev k-' + kind, item.g);
      node.dataset.item = String(i);
      this.place(node, item);
      this.nodes.set(i, node);
    }

    // a node goes at the end, except among the interleaved blocks of one message (a region, `rg`):
    // there its place is its block's rank in the message's block order (`o`), whichever streamed first
    place(node, item) {
      const parent = this.parent();
      if (item.rg === undefined) {
        parent.appendChild(node);
        return;
      }
      const region = String(item.rg);
      node.dataset.rg = region;
      node.dataset.o = String(item.o);
      let after = parent.lastChild;
      while (after && after.dataset && after.dataset.rg === region && Number(after.dataset.o) > item.o) after = after.previousSibling;
      parent.insertBefore(node, after ? after.nextSibling : parent.firstChild);
    }

    leave(i) {
      const model = this.model;
      const item = model.items[i];
      if (item.drop) this.droppedBy(item, false);
      if (item.b !== undefined) {
        const block = model.blocks[item.b];
        if (block.first === i) {
          if (block.node) block.node.remove();
          if (this.live === block) this.live = null;
          block.node = null;
          block.textNode = null;
          block.shown = 0;
        } else if (block.node) {
          this.unblockItem(block, item);
        }
        return;
      }
      const node = this.nodes.get(i);
      if (node) {
        node.remove();
        this.nodes.delete(i);
        if (item.k === 'turn') this.sections.pop();
      }
    }

    // -- events --

    turnSection(item) {
      const section = el('section', 'turn');
      section.dataset.turn = String(item.u);
      const head = el('h2', 'turn-head');
      head.appendChild(el('span', 'turn-label', item.label));
      const figures = this.figures[String(item.u)];
      if (figures) head.appendChild(el('span', 'figures ui', figureText(figures)));
      section.appendChild(head);
      return section;
    }

    prompt(item) {
      const node = el('div', 'card user');
      node.appendChild(el('div', 'who ui', 'you'));
      const body = el('div', 'body prose', item.lines.join('\n'));
      node.appendChild(body);
      this.pictures(node, item.im);
      this.copyButton(node, () => item.lines.join('\n'));
      return node;
    }

    result(item) {
      const node = el('div', 'card result' + (item.err ? ' error' : ''));
      node.appendChild(segmentsNode('div', 'head', item.g));
      const text = item.lines.join('\n');
      const body = el('pre', 'body', text);
      node.appendChild(body);
      node.dataset.lines = String(item.lines.length);
      this.pictures(node, item.im);
      this.collapsible(node);
      this.copyButton(node, () => text);
      return node;
    }

    pictures(node, ids) {
      for (const id of ids || []) {
        const src = this.images[id];
        if (!src) continue;
        const figure = el('figure', 'picture ui');
        const img = el('img');
        img.alt = 'attached image ' + id;
        img.src = src;
        figure.appendChild(img);
        node.appendChild(figure);
      }
    }

    copyButton(node, text) {
      const button = el('button', 'copy ui', 'copy');
      button.type = 'button';
      button.title = 'Copy this block\'s text';
      button.addEventListener('click', (event) => {
        event.stopPropagation();
        copyText(text(), button);
      });
      node.appendChild(button);
    }

    collapsible(node) {
      const toggle = el('button', 'toggle ui');
      toggle.type = 'button';
      toggle.addEventListener('click', () => {
        node.classList.toggle('expanded');
        node.dataset.user = '1';
        this.updateCollapse(node);
      });
      node.appendChild(toggle);
      this.updateCollapse(node);
    }

    updateCollapse(node) {
      const toggle = node.querySelector(':scope > .toggle');
      if (!toggle) return;
      const lines = Number(node.dataset.lines || 0);
      const long = lines > COLLAPSE_LINES;
      const expanded = node.classList.contains('expanded');
      const live = node.classList.contains('live');
      node.classList.toggle('collapsed', long && !expanded && !live);
      node.classList.toggle('tail', long && !expanded && live);
      toggle.hidden = !long;
      toggle.textContent = expanded ? 'show less' : 'show all ' + count(lines) + ' lines';
    }

    // -- blocks --

    openBlock(block, i) {
      const type = block.type;
      const node = el('div', 'blk ' + type);
      node.dataset.block = String(block.index);
      node.dataset.item = String(i);
      let head = null;
      if (type === 'reasoning') head = el('div', 'head', '');
      else if (type === 'tool') {
        head = el('div', 'head');
        block.label = el('span', 'label', 'tool call');
        block.name = el('span', 'name');
        head.append(block.label, block.name);
      }
      if (head) node.appendChild(head);
      const body = el(type === 'text' ? 'div' : 'pre', type === 'text' ? 'body prose' : 'body');
      block.textNode = document.createTextNode('');
      body.appendChild(block.textNode);
      node.appendChild(body);
      block.head = head;
      block.body = body;
      block.foot = null;
      block.shown = 0;
      block.breaks = 0;
      block.node = node;
      node.dataset.lines = '0';
      if (type !== 'text') this.collapsible(node);
      this.copyButton(node, () => block.textNode.data + (block.whole || ''));
      this.place(node, this.model.items[i]);
    }

    blockItem(block, item) {
      const kind = item.k;
      if (kind === 'thinking') {
        block.head.textContent = 'thinking';
      } else if (kind === 'reasoning' && !item.l) {  // a whole reasoning block
        if (item.hd) block.head.textContent = 'thinking';
        this.wholeText(block, item.x);
      } else if (kind === 'tool-start' && item.args !== undefined) {
        block.name.textContent = item.name ? ' ' + item.name : '';
        this.wholeText(block, item.args);
        if (item.foot) this.addFoot(block, 'dropped', item.foot);
      } else if (kind === 'tool-name') {
        block.name.textContent = item.name ? ' ' + item.name : '';
      } else if (kind === 'tool-end') {
        if (item.end === 'whole') {
          block.name.textContent = item.name ? ' ' + item.name : '';
          this.wholeText(block, item.args);
        }
        if (item.foot) this.addFoot(block, item.end, item.foot, item.dr);
      } else if (kind === 'block') {
        if (item.ph !== undefined) {
          block.node.classList.add('placeholder');
          const caption = el('div', 'ph', item.ph);
          block.body.appendChild(caption);
          block.whole = item.ph;
          this.pictures(block.node, item.im);
        } else {
          this.wholeText(block, item.x);
        }
      }
    }

    addFoot(block, end, text, dropped) {
      block.foot = el('div', 'foot s-' + (dropped || end === 'max-tokens' || end === 'dropped' ? 'retry' : 'note'), text);
      block.node.insertBefore(block.foot, block.body.nextSibling);
      block.node.classList.add('ended-' + end);
    }

    // a call another block's output closed before a max-tokens finish dropped it: the item that closed
    // it (`drop`: [block, words]) marks it so, on the call's own node
    droppedBy(item, entering) {
      const block = this.model.blocks[item.drop[0]];
      if (!block.node) return;
      if (entering) {
        this.addFoot(block, 'dropped', item.drop[1], true);
      } else if (block.foot) {
        block.foot.remove();
        block.foot = null;
        block.node.classList.remove('ended-dropped');
      }
    }

    unblockItem(block, item) {
      const kind = item.k;
      if (kind === 'tool-start' && item.foot) {
        if (block.foot) block.foot.remove();
        block.foot = null;
        block.node.classList.remove('ended-dropped');
      }
      if (kind === 'tool-name' || (kind === 'tool-end' && item.end === 'whole')) block.name.textContent = '';
      if (kind === 'tool-end') {
        if (block.foot) block.foot.remove();
        block.foot = null;
        block.node.classList.remove('ended-' + item.end);
        if (item.end === 'whole') this.wholeText(block, '');
      }
      if (kind === 'thinking' && block.head) block.head.textContent = '';
    }

    wholeText(block, text) {
      block.textNode.data = text;
      block.shown = 0;
      block.whole = '';
      block.node.dataset.lines = String(countLines(text));
      this.updateCollapse(block.node);
    }
  }

  function countBreaks(text) {
    let lines = 0;
    let at = -1;
    while ((at = text.indexOf('\n', at + 1)) >= 0) lines++;
    return lines;
  }

  function figureText(figures) {
    const bits = [];
    if (figures.ttft !== undefined) bits.push('TTFT ' + duration(figures.ttft));
    if (figures.dur !== undefined) bits.push(duration(figures.dur));
    if (figures.in !== undefined) bits.push(count(figures.in) + ' in');
    if (figures.out !== undefined) bits.push(count(figures.out) + ' out');
    if (figures.tps !== undefined) bits.push(Math.round(figures.tps) + ' tok/s');
    if (figures.cost !== undefined && figures.cur) bits.push(money(figures.cost, figures.cur));
    if (figures.inh) bits.push('inherited');
    return bits.join(' · ');
  }

  // ------------------------------------------------------------------------------------------------
  // Search: every text of the session, played or not

  class Search {
    constructor(model, screen) {
      this.model = model;
      this.screen = screen;
      this.docs = null;
      this.query = '';
      this.hits = [];
      this.current = -1;
    }

    documents() {
      if (this.docs) return this.docs;
      const docs = [];
      const model = this.model;
      const seen = new Set();
      model.items.forEach((item, i) => {
        const position = item.s + 1;
        const add = (part, text) => { if (text) docs.push({ item: i, part, text, position }); };
        if (item.drop) add('drop', item.drop[1]);
        if (item.b !== undefined) {
          const block = model.blocks[item.b];
          if (item.l) {
            if (!seen.has(item.b)) {
              seen.add(item.b);
              docs.push({ block: item.b, part: 'body', text: block.text, position });
            }
            return;
          }
          if (item.k === 'thinking' || (item.k === 'reasoning' && item.hd)) add('head', 'thinking');
          if (item.k === 'tool-start') add('label', 'tool call');
          if (item.name) add('name', ' ' + item.name);
          if (item.x !== undefined) add('body', item.x);
          if (item.args) add('body', item.args);
          if (item.ph) add('ph', item.ph);
          if (item.foot) add('foot', item.foot);
          return;
        }
        if (item.k === 'turn') add('label', item.label);
        else if (item.k === 'user') add('body', item.lines.join('\n'));
        else if (item.k === 'tool-result') {
          add('head', segmentsText(item.g));
          add('body', item.lines.join('\n'));
        } else add('main', segmentsText(item.g));
      });
      this.docs = docs;
      return docs;
    }

    run(query) {
      this.query = query;
      this.hits = [];
      this.current = -1;
      if (!query) return 0;
      const pattern = new RegExp(escapeRegExp(query), 'giu');
      const hits = this.hits;
      const model = this.model;
      outer:
      for (const doc of this.documents()) {
        pattern.lastIndex = 0;
        let match;
        while ((match = pattern.exec(doc.text)) !== null) {
          const start = match.index;
          const end = start + match[0].length;
          if (end === start) { pattern.lastIndex++; continue; }
          const position = doc.block !== undefined ? model.blockPosition(doc.block, end) : doc.position;
          hits.push({ doc, start, end, position });
          if (hits.length >= MAX_HITS) break outer;
        }
      }
      hits.sort((a, b) => a.position - b.position);
      return hits.length;
    }

    // the hit to go to from `position`: the first completing after it (wrapping), or the last before
    firstFrom(position) {
      if (!this.hits.length) return -1;
      const i = this.hits.findIndex((hit) => hit.position > position);
      return i >= 0 ? i : 0;
    }

    // the DOM range of a hit that is on screen
    range(hit) {
      const doc = hit.doc;
      const screen = this.screen;
      let container = null;
      if (doc.block !== undefined) {
        const block = this.model.blocks[doc.block];
        if (!block.node || block.textNode.data.length < hit.end) return null;
        const range = document.createRange();
        range.setStart(block.textNode, hit.start);
        range.setEnd(block.textNode, hit.end);
        return range;
      }
      const item = this.model.items[doc.item];
      if (doc.part === 'drop') {
        const block = this.model.blocks[item.drop[0]];
        container = block.node ? block.foot : null;
      } else if (item.b !== undefined) {
        const block = this.model.blocks[item.b];
        if (!block.node) return null;
        container = { head: block.head, label: block.label, name: block.name, body: block.body, ph: block.node.querySelector('.ph'),
          foot: block.foot }[doc.part];
      } else {
        const node = screen.nodes.get(doc.item);
        if (!node) return null;
        if (item.k === 'turn') container = node.querySelector('.turn-label');
        else if (doc.part === 'head') container = node.querySelector('.head');
        else if (doc.part === 'body') container = node.querySelector('.body');
        else container = node;
      }
      if (!container) return null;
      return textRange(container, hit.start, hit.end);
    }
  }

  function textRange(container, start, end) {
    const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement.closest('.ui') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const range = document.createRange();
    let offset = 0;
    let started = false;
    let node;
    while ((node = walker.nextNode())) {
      const length = node.data.length;
      if (!started && start < offset + length) {
        range.setStart(node, start - offset);
        started = true;
      }
      if (started && end <= offset + length) {
        range.setEnd(node, end - offset);
        return range;
      }
      offset += length;
    }
    return null;
  }

  // ------------------------------------------------------------------------------------------------
  // The search bar: the query, the match count, walking the hits, highlighting those on screen

  class SearchBar {
    constructor(replay) {
      this.replay = replay;
      this.search = new Search(replay.model, replay.screen);
      this.highlightDue = 0;
    }

    wire() {
      $('search-open').addEventListener('click', () => this.open());
      $('search-close').addEventListener('click', () => this.close());
      $('search-next').addEventListener('click', () => this.move(1));
      $('search-prev').addEventListener('click', () => this.move(-1));
      const input = $('search');
      let timer = 0;
      input.addEventListener('input', () => {
        clearTimeout(timer);
        timer = setTimeout(() => this.run(input.value, true), 150);
      });
      input.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') {
          event.preventDefault();
          clearTimeout(timer);
          if (input.value !== this.search.query) this.run(input.value, true);
          else this.move(event.shiftKey ? -1 : 1);
        } else if (event.key === 'Escape') {
          event.preventDefault();
          this.close();
        }
      });
    }

    get isOpen() {
      return !$('searchbar').hidden;
    }

    open() {
      $('searchbar').hidden = false;
      const input = $('search');
      input.focus();
      input.select();
    }

    close() {
      $('searchbar').hidden = true;
      this.search.run('');
      $('search').value = '';
      $('search-count').textContent = '';
      this.highlight();
      $('search').blur();
    }

    run(query, move) {
      const hits = this.search.run(query);
      if (hits && move) this.goTo(this.search.firstFrom(this.replay.screen.position));
      else this.highlight();
      this.showCount();
      return hits;
    }

    showCount() {
      const search = this.search;
      const total = search.hits.length;
      $('search-count').textContent = !search.query ? '' : total ?
        (search.current + 1) + ' / ' + count(total) + (total >= MAX_HITS ? '+' : '') : 'no match';
    }

    move(step) {
      const search = this.search;
      if (!search.hits.length) return;
      const next = search.current < 0 ? search.firstFrom(this.replay.screen.position) :
        (search.current + step + search.hits.length) % search.hits.length;
      this.goTo(next);
    }

    goTo(index) {
      const search = this.search;
      const replay = this.replay;
      if (index < 0 || index >= search.hits.length) return;
      search.current = index;
      const hit = search.hits[index];
      replay.pauseForNavigation();
      replay.seekPosition(hit.position, () => {
        const range = search.range(hit);
        if (range) {
          const box = range.getBoundingClientRect();
          const target = box.top + window.scrollY - window.innerHeight / 3;
          replay.scrollTo(() => window.scrollTo(0, Math.max(target, 0)));
          const holder = range.startContainer.parentElement && range.startContainer.parentElement.closest('.collapsed');
          if (holder) {
            holder.classList.add('expanded');
            replay.screen.updateCollapse(holder);
          }
        }
      });
      this.highlight();
      this.showCount();
    }

    // after a frame: the hits on screen highlighted again (twice a second at most while playing)
    framed() {
      const now = this.replay.now();
      if (this.search.query && now >= this.highlightDue) {
        this.highlightDue = now + (this.replay.playing ? 0.5 : 0);
        this.highlight();
      }
    }

    highlight() {
      if (!window.CSS || !CSS.highlights || typeof Highlight !== 'function') return;
      CSS.highlights.delete('dshctl-hit');
      CSS.highlights.delete('dshctl-current');
      const search = this.search;
      if (!search.query || !search.hits.length) return;
      const position = this.replay.screen.position;
      const center = search.current >= 0 ? search.current : search.firstFrom(position);
      const low = Math.max(0, center - HIGHLIGHT_WINDOW);
      const high = Math.min(search.hits.length, center + HIGHLIGHT_WINDOW);
      const ranges = [];
      let current = null;
      for (let i = low; i < high; i++) {
        const hit = search.hits[i];
        if (hit.position > position) continue;
        const range = search.range(hit);
        if (!range) continue;
        if (i === search.current) current = range;
        else ranges.push(range);
      }
      CSS.highlights.set('dshctl-hit', new Highlight(...ranges));
      if (current) CSS.highlights.set('dshctl-current', new Highlight(current));
    }
  }

  // ------------------------------------------------------------------------------------------------
  // The player: clock, playback, navigation, keys, the script API

  class Replay {
    constructor(data) {
      this.data = data;
      this.model = new Model(data);
      this.screen = new Screen(this.model, $('transcript'));
      this.searchBar = new SearchBar(this);
      this.search = this.searchBar.search;
      this.playing = false;
      this.speed = Math.min(Math.max(data.speed || 1, MIN_SPEED), MAX_SPEED);
      this.time = 0;
      this.anchorWall = 0;
      this.anchorTime = 0;
      this.follow = true;
      this.frameRequested = false;
      this.ourScroll = 0;
      this.api = null;
    }

    start() {
      this.header();
      this.controls();
      this.keys();
      this.publishApi();
      say('');
      $('controls').hidden = false;
      document.documentElement.classList.add('ready');
      this.drawMarks();
      const hash = this.fromHash();
      if (!hash) {
        const start = Math.min(this.data.start || 0, this.model.count);
        if (reducedMotion) this.seekPosition(this.model.count, () => this.scrollTo(() => window.scrollTo(0, 0)));
        else if (start > 0) this.seekTime(this.model.at[Math.min(start, this.model.count - 1)]);  // as the terminal player: fragment `start` is due at once
        else this.show(0);
        if (!reducedMotion) this.play();
      }
      window.addEventListener('hashchange', () => this.fromHash());
      this.emit();
    }

    header() {
      const session = this.data.session || {};
      const bits = ['dsh session ' + (session.id || '?'), 'log v' + session.version];
      if (session.cwd) bits.push(session.cwd);
      if (session.createdAt) bits.push(new Date(session.createdAt).toISOString().slice(0, 16).replace('T', ' ') + ' UTC');
      bits.push(this.model.turns.length + ' turn' + (this.model.turns.length === 1 ? '' : 's'));
      bits.push(clock(this.model.duration) + ' on the replay clock');
      if (session.synthetic) bits.push('synthetic timing');
      $('meta').textContent = bits.join(' · ');
    }

    // -- clock and playback --

    now() {
      return performance.now() / 1000;
    }

    currentTime() {
      if (!this.playing) return this.time;
      return Math.min(this.anchorTime + (this.now() - this.anchorWall) * this.speed, this.model.duration);
    }

    play() {
      if (this.playing) return;
      if (this.screen.position >= this.model.count) {  // at the end: from the start, as the terminal player
        this.show(0);
        this.time = 0;
      }
      this.playing = true;
      this.anchorWall = this.now();
      this.anchorTime = this.time;
      this.follow = true;
      this.buttons();
      this.tick();
      this.emit();
    }

    pause() {
      if (!this.playing) return;
      this.time = this.currentTime();
      this.playing = false;
      this.screen.show(this.model.due(this.time));  // the screen is the clock's, to the millisecond
      this.screen.setLive(null);
      this.buttons();
      this.frame();
      this.emit();
    }

    toggle() {
      if (this.playing) this.pause();
      else this.play();
    }

    setSpeed(speed) {
      speed = Math.min(Math.max(speed, MIN_SPEED), MAX_SPEED);
      this.time = this.currentTime();
      this.anchorTime = this.time;
      this.anchorWall = this.now();
      this.speed = speed;
      this.fillSelect($('speed'), SPEEDS, speed, (v) => formatSpeed(v));
      this.emit();
    }

    setIdle(idle) {
      const position = this.screen.position;
      const wasPlaying = this.playing;
      this.model.setIdleLimit(idle);
      this.time = this.model.timeOf(position);
      this.anchorTime = this.time;
      this.anchorWall = this.now();
      this.fillSelect($('idle'), IDLES, idle, (v) => (v ? v + ' s' : 'off'));
      this.drawMarks();
      this.frame();
      if (wasPlaying) this.tick();
      this.emit();
    }

    tick() {
      if (this.frameRequested) return;
      this.frameRequested = true;
      requestAnimationFrame(() => {
        this.frameRequested = false;
        if (!this.playing) return;
        const t = this.currentTime();
        this.time = t;
        this.show(this.model.due(t));
        if (t >= this.model.duration) {
          this.playing = false;
          this.screen.setLive(null);
          this.buttons();
          this.frame();
          this.emit('ended');
          return;
        }
        this.tick();
      });
    }

    show(position) {
      this.screen.show(position);
      this.frame();
    }

    // seek to a time on the replay clock; the screen shows what had streamed by then
    seekTime(seconds) {
      const t = Math.min(Math.max(Number(seconds) || 0, 0), this.model.duration);
      this.time = t;
      this.anchorTime = t;
      this.anchorWall = this.now();
      this.screen.show(this.model.due(t));
      this.follow = true;
      this.frame(true);
      if (this.playing) this.tick();
      this.emit();
    }

    // seek to a position (fragments shown); the clock shows the last fragment shown's time
    seekPosition(position, reveal) {
      position = Math.max(0, Math.min(position, this.model.count));
      this.screen.show(position);
      this.time = this.model.timeOf(position);
      this.anchorTime = this.time;
      this.anchorWall = this.now();
      this.follow = !reveal;
      this.frame(!reveal);
      if (reveal) reveal();
      if (this.playing) this.tick();
      this.emit();
    }

    seekTurn(turn, top) {
      const found = this.model.turns.find((entry) => entry.turn === turn);
      if (!found) {
        this.flash('no turn ' + turn);
        return false;
      }
      this.seekPosition(found.fragment + 1, top ? () => this.revealTurn(found) : null);
      return true;
    }

    revealTurn(found) {
      const node = this.screen.nodes.get(found.item);
      if (node) this.scrollTo(() => node.scrollIntoView({ block: 'start' }));
    }

    pauseForNavigation() {
      if (this.playing) this.pause();
    }

    stepFragment(forward) {
      this.pauseForNavigation();
      const model = this.model;
      let q = this.screen.position;
      if (forward) {
        while (q < model.count) {
          q++;
          if (!model.quiet[q - 1]) break;
        }
      } else if (q > 0) {
        q--;
        while (q > 0 && model.quiet[q - 1]) q--;
      }
      this.seekPosition(q);
    }

    stepBlock(forward) {
      this.pauseForNavigation();
      const ends = this.model.unitEnds;
      const position = this.screen.position;
      if (forward) {
        const i = upperBound(ends, position);
        this.seekPosition(i < ends.length ? ends[i] : this.model.count);
      } else {
        const i = lowerBound(ends, position) - 1;
        this.seekPosition(i >= 0 ? ends[i] : 0);
      }
    }

    stepMark(marks, forward, none) {
      const position = this.screen.position;
      let target = null;
      if (forward) {
        const i = upperBound(marks, position);
        if (i < marks.length) target = marks[i];
      } else {
        const i = upperBound(marks, position - 1) - 1;
        if (i >= 0) target = marks[i];
      }
      if (target === null) {
        this.flash(none);
        return;
      }
      this.seekPosition(target);
    }

    jumpPercent(percent) {
      this.seekTime(this.model.duration * percent / 100);
    }

    // -- drawing the controls --

    frame(scroll) {
      const model = this.model;
      const t = this.time;
      const share = model.duration > 0 ? Math.min(t / model.duration, 1) : (this.screen.position >= model.count ? 1 : 0);
      $('progress').style.width = (share * 100).toFixed(3) + '%';
      $('thumb').style.left = (share * 100).toFixed(3) + '%';
      const seek = $('seek');
      seek.setAttribute('aria-valuemax', model.duration.toFixed(3));
      seek.setAttribute('aria-valuenow', t.toFixed(3));
      seek.setAttribute('aria-valuetext', clock(t) + ' of ' + clock(model.duration));
      $('clock').textContent = clock(t) + ' / ' + clock(model.duration);
      const turn = model.turnAt(this.screen.position);
      $('where').textContent = turn ? 'turn ' + turn.turn + (model.turns.length ? '/' + model.turns[model.turns.length - 1].turn : '') : '';
      const select = $('turns');
      const value = turn ? String(turn.turn) : '';
      if (select.value !== value) select.value = value;
      if (this.follow && (this.playing || scroll)) this.scrollToEnd();
      this.searchBar.framed();
    }

    buttons() {
      const play = $('play');
      play.setAttribute('aria-label', this.playing ? 'Pause' : 'Play');
      document.documentElement.classList.toggle('playing', this.playing);
    }

    scrollTo(action) {
      this.ourScroll = performance.now();
      action();
    }

    scrollToEnd() {
      const toEnd = () => this.scrollTo(() => {
        const root = document.scrollingElement || document.documentElement;
        const live = this.screen.live;
        if (live && live.body && live.node.classList.contains('tail')) live.body.scrollTop = live.body.scrollHeight;
        root.scrollTop = root.scrollHeight;
      });
      toEnd();
      $('follow').hidden = true;
    }

    drawMarks() {
      const canvas = $('marks');
      const seek = $('seek');
      const width = seek.clientWidth;
      const height = seek.clientHeight;
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.max(1, Math.round(width * ratio));
      canvas.height = Math.max(1, Math.round(height * ratio));
      const context = canvas.getContext('2d');
      if (!context) return;
      context.setTransform(ratio, 0, 0, ratio, 0, 0);
      context.clearRect(0, 0, width, height);
      const model = this.model;
      if (!(model.duration > 0)) return;
      const style = getComputedStyle(document.documentElement);
      const x = (fragment) => Math.round(model.at[fragment] / model.duration * (width - 2)) + 1;
      context.fillStyle = style.getPropertyValue('--tool').trim() || '#888';
      for (const fragment of model.tools) context.fillRect(x(fragment), height * 0.55, 1, height * 0.45);
      context.fillStyle = style.getPropertyValue('--accent').trim() || '#06c';
      for (const turn of model.turns) context.fillRect(x(turn.fragment), 0, 2, height);
    }

    fillSelect(select, values, current, label) {
      const all = values.includes(current) ? values : [...values, current].sort((a, b) => a - b);
      if (select.options.length !== all.length || select.dataset.current !== String(current)) {
        select.replaceChildren(...all.map((value) => {
          const option = el('option', '', label(value));
          option.value = String(value);
          return option;
        }));
      }
      select.value = String(current);
      select.dataset.current = String(current);
    }

    flash(text) {
      const node = $('notice');
      node.textContent = text;
      node.hidden = false;
      clearTimeout(this.flashTimer);
      this.flashTimer = setTimeout(() => { node.hidden = true; }, 1600);
    }

    // -- wiring --

    controls() {
      this.menus();
      this.buttonClicks();
      this.searchBar.wire();
      this.gotoInput();
      this.seekBar();
      this.watchWindow();
      this.drawMarks();
    }

    // the speed, idle limit and turn menus
    menus() {
      const model = this.model;
      this.fillSelect($('speed'), SPEEDS, this.speed, (v) => formatSpeed(v));
      this.fillSelect($('idle'), IDLES, model.idle, (v) => (v ? v + ' s' : 'off'));
      const turns = $('turns');
      const none = el('option', '', 'turn…');
      none.value = '';
      turns.replaceChildren(none, ...model.turns.map((turn) => {
        const option = el('option', '', 'turn ' + turn.turn);
        option.value = String(turn.turn);
        return option;
      }));
      turns.hidden = !model.turns.length;
      $('speed').addEventListener('change', (event) => this.setSpeed(Number(event.target.value)));
      $('idle').addEventListener('change', (event) => this.setIdle(Number(event.target.value)));
      turns.addEventListener('change', (event) => {
        if (event.target.value) this.seekTurn(Number(event.target.value), true);
        event.target.blur();
      });
    }

    buttonClicks() {
      const model = this.model;
      $('play').addEventListener('click', () => this.toggle());
      $('prev-turn').addEventListener('click', () => this.stepMark(model.turnPositions, false, 'no earlier turn'));
      $('next-turn').addEventListener('click', () => this.stepMark(model.turnPositions, true, 'no later turn'));
      $('prev-block').addEventListener('click', () => this.stepBlock(false));
      $('next-block').addEventListener('click', () => this.stepBlock(true));
      $('follow').addEventListener('click', () => { this.follow = true; this.scrollToEnd(); });
      $('help-open').addEventListener('click', () => this.help(true));
      $('help-close').addEventListener('click', () => this.help(false));
      $('help').addEventListener('click', (event) => { if (event.target === $('help')) this.help(false); });
      $('theme').addEventListener('click', () => this.cycleTheme());
      // a button clicked with the mouse takes no focus, so Space stays play/pause (the keyboard still tabs to it)
      for (const button of document.querySelectorAll('#controls button, #top button')) {
        button.addEventListener('mousedown', (event) => event.preventDefault());
      }
    }

    // the go-to-turn box (key g)
    gotoInput() {
      const goto = $('goto');
      goto.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') {
          event.preventDefault();
          const turn = parseInt(goto.value, 10);
          this.closeGoto();
          if (Number.isFinite(turn)) this.seekTurn(turn, true);
        } else if (event.key === 'Escape') {
          event.preventDefault();
          this.closeGoto();
        }
      });
    }

    // the window: its size and scheme redraw the marks; the reader's scrolls and inputs decide following
    watchWindow() {
      window.addEventListener('resize', () => this.drawMarks());
      if (window.matchMedia) window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.drawMarks());
      window.addEventListener('scroll', () => this.scrolled(), { passive: true });
      // the end moves after a frame too: pictures decode, turns scrolled past get laid out (content-visibility)
      if (typeof ResizeObserver === 'function') {
        new ResizeObserver(() => { if (this.follow) this.scrollToEnd(); }).observe($('transcript'));
      }
      this.lastInput = -Infinity;
      const touched = () => { this.lastInput = performance.now(); };
      for (const type of ['wheel', 'touchstart', 'touchmove', 'pointerdown', 'keydown']) {
        window.addEventListener(type, touched, { passive: true, capture: true });
      }
    }

    // the reader scrolled away from the end (a wheel, a touch, a key, the scroll bar): stop following
    // until they come back to it; scrolls of the page's own (layout settling) change nothing
    scrolled() {
      const now = performance.now();
      if (now - this.ourScroll < 120 || now - this.lastInput > 1000) return;
      const root = document.scrollingElement || document.documentElement;
      const atEnd = root.scrollHeight - root.scrollTop - root.clientHeight < 48;
      this.follow = atEnd;
      $('follow').hidden = atEnd || !this.playing;
    }

    seekBar() {
      const seek = $('seek');
      let dragging = false;
      let pending = null;
      const at = (event) => {
        const box = seek.getBoundingClientRect();
        const share = Math.min(Math.max((event.clientX - box.left) / Math.max(box.width, 1), 0), 1);
        return share * this.model.duration;
      };
      const apply = () => {
        if (pending === null) return;
        const t = pending;
        pending = null;
        this.seekTime(t);
      };
      seek.addEventListener('pointerdown', (event) => {
        dragging = true;
        seek.setPointerCapture(event.pointerId);
        pending = at(event);
        apply();
      });
      seek.addEventListener('pointermove', (event) => {
        if (!dragging) return;
        pending = at(event);
        requestAnimationFrame(apply);
      });
      const stop = () => { dragging = false; };
      seek.addEventListener('pointerup', stop);
      seek.addEventListener('pointercancel', stop);
    }

    help(open) {
      $('help').hidden = !open;
      if (open) $('help-close').focus();
    }

    cycleTheme() {
      const root = document.documentElement;
      const next = { '': 'light', light: 'dark', dark: '' }[root.dataset.theme || ''];
      if (next) root.dataset.theme = next;
      else delete root.dataset.theme;
      $('theme').title = 'Theme: ' + (next || 'follows the system');
      this.drawMarks();
    }

    // -- keys --

    keys() {
      document.addEventListener('keydown', (event) => {
        if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
        const target = event.target;
        if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT')) return;
        if (!$('help').hidden) {
          if (event.key === 'Escape' || event.key === '?' || event.key === 'h') {
            event.preventDefault();
            this.help(false);
          }
          return;
        }
        const handled = this.key(event);
        if (handled) event.preventDefault();
      });
    }

    key(event) {
      const model = this.model;
      const key = event.key;
      if (isOn(event, 'BUTTON') && (key === ' ' || key === 'Enter')) return false;  // a focused button's own click
      switch (key) {
        case ' ': this.toggle(); return true;
        case 'ArrowLeft': this.seekTime(this.currentTime() - SEEK_SECONDS); return true;
        case 'ArrowRight': this.seekTime(this.currentTime() + SEEK_SECONDS); return true;
        case '.': this.stepFragment(true); return true;
        case ',': this.stepFragment(false); return true;
        case '>': this.stepBlock(true); return true;
        case '<': this.stepBlock(false); return true;
        case ']': this.stepMark(model.turnPositions, true, 'no later turn'); return true;
        case '[': this.stepMark(model.turnPositions, false, 'no earlier turn'); return true;
        case 'n': this.stepMark(model.toolPositions, true, 'no later tool call'); return true;
        case 'p': this.stepMark(model.toolPositions, false, 'no earlier tool call'); return true;
        case 'g': this.openGoto(); return true;
        case '/': this.searchBar.open(); return true;
        case '+': case '=': this.setSpeed(this.speed * 2); this.flash('speed ' + formatSpeed(this.speed)); return true;
        case '-': case '_': this.setSpeed(this.speed / 2); this.flash('speed ' + formatSpeed(this.speed)); return true;
        case '?': case 'h': this.help(true); return true;
        case 'Home': this.pauseForNavigation(); this.seekPosition(0); return true;
        case 'End': this.pauseForNavigation(); this.seekPosition(model.count); return true;
        case 'Escape':
          if (this.searchBar.isOpen) { this.searchBar.close(); return true; }
          return false;
        default:
          if (key.length === 1 && key >= '0' && key <= '9') {
            this.jumpPercent(Number(key) * 10);
            return true;
          }
          return false;
      }
    }

    openGoto() {
      const bar = $('gotobar');
      bar.hidden = false;
      const turns = this.model.turns;
      $('goto-range').textContent = turns.length ? turns[0].turn + '–' + turns[turns.length - 1].turn : 'no turns';
      const input = $('goto');
      input.value = '';
      input.focus();
    }

    closeGoto() {
      $('gotobar').hidden = true;
      $('goto').blur();
    }

    // -- deep links: #t=42.5, #turn=3 --

    fromHash() {
      let hash = location.hash.replace(/^#/, '');
      try {
        hash = decodeURIComponent(hash);
      } catch (malformed) {  // #% or #t=%E0: not a link the page knows, as any other
      }
      if (!hash) return false;
      const params = new URLSearchParams(hash);
      if (params.has('t')) {
        const t = Number(params.get('t'));
        if (!Number.isFinite(t)) return false;
        if (this.playing) this.pause();
        this.seekTime(t);
        return true;
      }
      if (params.has('turn')) {
        const turn = Number(params.get('turn'));
        if (!Number.isInteger(turn)) return false;
        if (this.playing) this.pause();
        if (!this.seekTurn(turn, true)) this.show(0);
        return true;
      }
      return false;
    }

    // -- the script API --

    publishApi() {
      this.api = new ReplayApi(this);
      Object.defineProperty(window, 'dshctlReplay', { value: this.api, enumerable: true });
      document.dispatchEvent(new CustomEvent('dshctlreplay:ready', { detail: this.api }));
    }

    state(ended) {
      return {
        state: this.playing ? 'playing' : (ended || this.screen.position >= this.model.count ? 'ended' : 'paused'),
        time: this.currentTime(),
        duration: this.model.duration,
        position: this.screen.position,
        fragments: this.model.count,
        speed: this.speed,
        idleLimit: this.model.idle,
        turn: (this.model.turnAt(this.screen.position) || {}).turn ?? null,
      };
    }

    emit(ended) {
      if (this.api) this.api.dispatchEvent(new CustomEvent('state', { detail: this.state(ended) }));
    }
  }

  // window.dshctlReplay: times are seconds on the replay's clock (the terminal player's), an EventTarget
  // that sends `state` events ({state, time, duration, position, fragments, speed, idleLimit, turn}).
  class ReplayApi extends EventTarget {
    #replay;

    constructor(replay) {
      super();
      this.#replay = replay;
    }

    play() { this.#replay.play(); }

    pause() { this.#replay.pause(); }

    seek(where) {
      const replay = this.#replay;
      if (where === 'end') replay.seekPosition(replay.model.count);
      else if (where && typeof where === 'object' && 'turn' in where) return replay.seekTurn(Number(where.turn), true);
      else replay.seekTime(Number(where));
      return true;
    }

    getCurrentTime() { return this.#replay.currentTime(); }

    getDuration() { return this.#replay.model.duration; }

    search(text) {
      const replay = this.#replay;
      if (typeof text !== 'string') return 0;
      $('search').value = text;
      $('searchbar').hidden = !text;
      return replay.searchBar.run(text, true);
    }

    searchNext() { this.#replay.searchBar.move(1); return this.#replay.search.current; }

    searchPrevious() { this.#replay.searchBar.move(-1); return this.#replay.search.current; }

    getState() { return this.#replay.state(); }

    setSpeed(speed) { this.#replay.setSpeed(Number(speed)); }

    setIdleLimit(seconds) { this.#replay.setIdle(Math.max(Number(seconds) || 0, 0)); }
  }

  function isOn(event, tag) {
    return event.target && event.target.tagName === tag;
  }

  function formatSpeed(value) {
    if (value >= 1) return value + '×';
    const inverse = 1 / value;
    return Number.isInteger(inverse) ? '1/' + inverse + '×' : value + '×';
  }

  load();
})();
