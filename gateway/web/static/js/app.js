// app.js: the web page. Hash routes:
//   #/                  live and finished matches, tournaments
//   #/match/ID          a match's transcript as it happens
//   #/tournament/ID     a tournament's standings, leaderboard and heat maps, live
//   #/leaderboard       ratings of one game's agents (analytics)
//   #/new               the form to start a match (built-in, registered or human agents)
//   #/new/tournament    the form to start a tournament

import { analytics, follow, getJSON, postJSON, referee, rpc, tournaments } from './api.js';
import { renderEvent, renderOutcome, seatTable, WaitingSeats } from './transcript.js';
import { agentName, causeText, el, fill, fitNarrow, fmtClock, fmtInterval, fmtNum, fmtRate, fmtTime, nameOf, num, paramsOf, plural, renderValue, seatNames, fmtDuration } from './format.js';
import { heatmap, heatmaps } from './heat.js';

const app = document.getElementById('app');
const conn = document.getElementById('conn');
let cleanup = () => {};

function setConn(state) {
  if (!state) {
    conn.hidden = true;
    return;
  }
  conn.hidden = false;
  conn.dataset.state = state;
  conn.textContent = { open: 'live', reconnecting: 'reconnecting…', failed: 'disconnected', closed: 'finished', connecting: 'connecting…' }[state] || state;
}

function banner(err, kind = '') {
  return el('div', { class: `banner ${kind}`, role: 'alert' }, err instanceof Error ? err.message : String(err));
}

/** poll calls fn now and every ms until the returned stop is called. */
function poll(fn, ms) {
  let timer = null;
  let stopped = false;
  const run = async () => {
    try {
      await fn();
    } finally {
      if (!stopped) timer = setTimeout(run, ms);
    }
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

const link = (href, text) => el('a', { href }, text);
// Ids stay on one line (a long one is cut short with an ellipsis; its title holds it whole).
const idLink = (href, id) => el('a', { href, class: 'id', title: id }, id);
const matchLink = (id) => idLink(`#/match/${encodeURIComponent(id)}`, id);
const tournamentLink = (id) => idLink(`#/tournament/${encodeURIComponent(id)}`, id);
const players = (seats) => (seats || []).map((s) => el('span', { class: 'pill' }, `${s.name}: ${agentName(s)}`));

// ---- matches ------------------------------------------------------------------------------

/**
 * pager pages through a listing with the page tokens the API returns: load(token) fetches one
 * page ({items, next}); show(items) draws it. The first page is polled; an older one stays as
 * it was asked (its token names where it starts, so it does not move as matches are added).
 */
function pager(id, load, show) {
  const tokens = ['']; // tokens[i] starts page i
  let page = 0;
  let next = '';
  const info = el('span', { class: 'muted small' });
  const newer = el('button', { type: 'button', class: 'small', dataset: { page: 'newer' } }, '← Newer');
  const older = el('button', { type: 'button', class: 'small', dataset: { page: 'older' } }, 'Older →');
  const nav = el('div', { class: 'pager', id: `${id}-pager` }, newer, info, older);
  let asked = 0; // only the latest request's answer is drawn: polls, events and clicks overlap
  const refresh = async () => {
    const mine = ++asked;
    const r = await load(tokens[page]);
    if (mine !== asked) return;
    next = r.next || '';
    show(r.items);
    newer.disabled = page === 0;
    older.disabled = !next;
    info.textContent = `page ${page + 1}`;
    nav.hidden = page === 0 && !next;
  };
  newer.addEventListener('click', () => {
    if (page > 0) page--;
    refresh().catch(() => {});
  });
  older.addEventListener('click', () => {
    if (!next) return;
    tokens[++page] = next;
    refresh().catch(() => {});
  });
  return { nav, refresh, reset: () => ((page = 0), refresh()) };
}

function viewMatches(query) {
  const live = el('tbody');
  const done = el('tbody');
  const tours = el('tbody');
  const msg = el('div');
  // Tournament matches are on their tournament's page; here only when asked for.
  const withTournaments = el('input', { type: 'checkbox', id: 'show-tournament-matches', checked: query.get('tournaments') === 'shown' });
  const listed = () => ({ excludeTournaments: !withTournaments.checked, pageSize: 50 });
  const liveRow = (x) => el('tr', {}, el('td', {}, matchLink(x.matchId), ' ', el('span', { class: 'tag live' }, 'live'), x.tournamentId ? el('div', { class: 'small muted in-tournament' }, 'in ', tournamentLink(x.tournamentId)) : null), el('td', {}, x.game), el('td', {}, players(x.seats)), el('td', {}, fmtTime(x.started)));
  const doneRow = (x) => {
    const names = seatNames(x.seats);
    const o = x.outcome || {};
    return el(
      'tr',
      {},
      el('td', {}, matchLink(x.matchId), x.tournamentId ? el('div', { class: 'small muted in-tournament' }, 'in ', tournamentLink(x.tournamentId)) : null),
      el('td', {}, x.game),
      el('td', {}, players(x.seats)),
      el('td', {}, el('strong', {}, causeText(o.cause)), o.summary ? el('div', { class: 'small muted' }, o.summary) : null),
      el('td', {}, (o.payoffs || []).map((p, i) => el('div', { class: 'nowrap' }, `${names[i] || i}: ${fmtNum(p)}`))),
      el('td', { class: 'nowrap' }, fmtTime(x.ended)),
    );
  };
  const tourRow = (x) =>
    el(
      'tr',
      {},
      el('td', {}, tournamentLink(x.tournamentId)),
      el('td', {}, x.game),
      el('td', {}, (x.labels || []).map((l) => el('span', { class: 'pill' }, l))),
      el('td', { class: 'num' }, fmtNum(x.matches)),
      el('td', { class: 'nowrap' }, fmtTime(x.created)),
    );
  const list = (state) => async (token) => {
    const r = await referee('ListMatches', { ...listed(), state, pageToken: token || undefined });
    return { items: r.matches || [], next: r.nextPageToken };
  };
  const livePages = pager('live', list('MATCH_STATE_RUNNING'), (xs) => fill(live, xs.length ? xs.map(liveRow) : el('tr', {}, el('td', { colspan: '4', class: 'empty' }, 'No match is running.'))));
  const donePages = pager('finished', list('MATCH_STATE_ENDED'), (xs) => fill(done, xs.length ? xs.map(doneRow) : el('tr', {}, el('td', { colspan: '6', class: 'empty' }, 'No match has finished yet.'))));
  const tourPages = pager('tournaments', async (token) => {
    const r = await tournaments('ListTournaments', { pageSize: 50, pageToken: token || undefined }).catch(() => ({}));
    return { items: r.tournaments || [], next: r.nextPageToken };
  }, (ts) => fill(tours, ts.length ? ts.map(tourRow) : el('tr', {}, el('td', { colspan: '5', class: 'empty' }, 'No tournament yet.'))));
  withTournaments.addEventListener('change', () => {
    history.replaceState(null, '', withTournaments.checked ? '#/?tournaments=shown' : '#/');
    livePages.reset().catch((err) => fill(msg, banner(err)));
    donePages.reset().catch((err) => fill(msg, banner(err)));
  });
  const table = (id, heads, body) => el('div', { class: 'scroll' }, el('table', { class: 'grid stack', id }, el('thead', {}, el('tr', {}, heads.map((h) => el('th', {}, h)))), body));
  fill(
    app,
    el('div', { class: 'toolbar' }, el('h1', {}, 'Matches'), el('label', { class: 'check' }, withTournaments, ' show tournament matches'), el('span', { class: 'grow' }), link('#/new', 'Start a match'), link('#/new/tournament', 'Start a tournament')),
    msg,
    el('section', { class: 'card' }, el('h2', {}, 'Live'), table('live-matches', ['Match', 'Game', 'Players', 'Started'], live), livePages.nav),
    el('section', { class: 'card' }, el('h2', {}, 'Finished'), table('finished-matches', ['Match', 'Game', 'Players', 'Outcome', 'Payoffs', 'Ended'], done), donePages.nav),
    el('section', { class: 'card' }, el('h2', {}, 'Tournaments'), table('tournaments', ['Tournament', 'Game', 'Entrants', 'Matches', 'Created'], tours), tourPages.nav),
  );
  return poll(async () => {
    try {
      await Promise.all([livePages.refresh(), donePages.refresh(), tourPages.refresh()]);
      fill(msg);
    } catch (err) {
      fill(msg, banner(err));
    }
  }, 3000);
}

// ---- one match ----------------------------------------------------------------------------

function viewMatch(id) {
  const head = el('section', { class: 'card', id: 'match-head' }, el('p', { class: 'muted' }, 'Waiting for the match to start…'));
  const list = el('ol', { class: 'transcript', id: 'transcript' });
  const outcome = el('section', { class: 'card outcome', id: 'match-outcome', hidden: true });
  const state = el('span', { class: 'tag live', id: 'match-state' }, 'live');
  const turnbar = el('div', { class: 'status turnbar', id: 'match-turn', 'aria-live': 'polite', hidden: true });
  const msg = el('div');
  fill(
    app,
    el('div', { class: 'toolbar' }, el('h1', {}, el('span', { class: 'id-title' }, `Match ${id}`)), state, el('span', { class: 'grow' }), link('#/', 'All matches')),
    msg,
    turnbar,
    head,
    outcome,
    el('section', { class: 'card' }, el('h2', {}, 'Transcript'), list),
  );
  const ctx = { names: [], started: null, issues: undefined, seq: 0 };
  // Whose turn it is and the time left, live: the referee's news of each seat asked to move,
  // until that seat's answer is in the record.
  const waits = new WaitingSeats();
  const showTurn = () => {
    const open = waits.open();
    if (!open.length) {
      turnbar.hidden = true;
      return;
    }
    const moveMs = 1000 * (parseFloat((ctx.started && ctx.started.limits && ctx.started.limits.moveTimeout) || '') || Infinity);
    // The earliest deadline, by this browser's clock, never more than a move's whole time.
    const left = Math.min(moveMs, ...open.map((w) => Date.parse(w.deadline) - Date.now()));
    const who = open.map((w) => nameOf(ctx.names, w.seat)).join(' and ');
    const attempt = Math.max(...open.map((w) => num(w.attempt)));
    turnbar.hidden = false;
    turnbar.dataset.state = 'acting';
    fill(
      turnbar,
      el('span', { class: 'status-text' }, `${who} to move: turn ${num(open[0].turn)}${attempt > 1 ? `, attempt ${attempt}` : ''}.`),
      el('span', { class: 'clock', dataset: { urgent: left < 10000 ? 'yes' : 'no' } }, left > 0 ? `${fmtClock(left)} left` : 'time is up'),
    );
  };
  const ticking = setInterval(showTurn, 500);
  const close = follow(
    `/api/v1/matches/${encodeURIComponent(id)}/events`,
    {
      waiting: (w) => {
        waits.ask(w);
        showTurn();
      },
      match_event: (ev) => {
        // A reconnected stream resumes after the last id it saw; never show an event twice.
        const seq = Number(ev.seq || 0);
        if (seq && seq <= ctx.seq) return;
        ctx.seq = seq;
        if (ev.matchStarted) {
          ctx.started = ev.matchStarted;
          ctx.names = seatNames(ev.matchStarted.seats);
          fill(head, matchHeader(ev.matchStarted, id));
        }
        const li = renderEvent(ev, ctx);
        if (li) list.append(li);
        waits.answer(ev);
        showTurn();
        if (ev.matchEnded) {
          outcome.hidden = false;
          outcome.dataset.cause = (ev.matchEnded.outcome || {}).cause || '';
          fill(outcome, renderOutcome(ev.matchEnded.outcome || {}, ctx.names));
          state.className = 'tag ended';
          state.textContent = 'finished';
        }
      },
      end: () => {
        state.className = 'tag ended';
        state.textContent = 'finished';
      },
      error: (e) => fill(msg, banner(e.message || 'the stream failed')),
    },
    (s) => {
      setConn(s === 'closed' ? 'closed' : s);
      if (s === 'failed' && !ctx.started) fill(msg, banner(`No match ${id} (or the gateway cannot be reached).`));
    },
  );
  return () => {
    clearInterval(ticking);
    close();
    setConn(null);
  };
}

// startedSeeds remembers the seed of each match started from this tab: the record hides a
// match's seed from spectators, but whoever started it was told it and may see it.
const startedSeeds = {
  put(id, seed) {
    try {
      sessionStorage.setItem(`parley-seed:${id}`, String(seed));
    } catch {
      // storage refused (private mode): the seed is simply not shown
    }
  },
  get(id) {
    try {
      return sessionStorage.getItem(`parley-seed:${id}`) || '';
    } catch {
      return '';
    }
  },
};

function matchHeader(ms, id) {
  const params = paramsOf(ms.params);
  const lim = ms.limits || {};
  const seed = ms.seed || startedSeeds.get(id);
  return [
    el('div', { class: 'toolbar' }, el('h2', {}, ms.game), ms.tournamentId ? el('span', {}, 'in tournament ', tournamentLink(ms.tournamentId)) : null, ms.revealPrivate ? el('span', { class: 'tag void' }, 'private parts shown') : null),
    seatTable(ms.seats),
    el(
      'details',
      {},
      el('summary', {}, 'Parameters and limits'),
      params ? renderValue(params) : el('p', { class: 'muted' }, 'Defaults.'),
      el('p', { class: 'small muted' }, `Move timeout ${fmtDuration(lim.moveTimeout) || 'default'}, retries ${lim.maxRetries ?? 'default'}${seed ? `, seed ${seed}` : ''}, rules version ${ms.rulesVersion || '?'}.`),
    ),
  ];
}

// ---- tournaments --------------------------------------------------------------------------

/**
 * newerStandings tells whether st is at least as far along as shown: the answer to
 * GetTournament and the stream's events can arrive in any order, and an older table must not
 * replace a newer one.
 */
export function newerStandings(st, shown) {
  if (!shown) return true;
  if (shown.complete && !st.complete) return false;
  const ended = Number(st.ended || 0);
  const shownEnded = Number(shown.ended || 0);
  if (ended === shownEnded && st.pending && !shown.pending) return false;
  return ended >= shownEnded;
}

/**
 * leaderboardTables draws a leaderboard as analytics ranks it: the established agents by the
 * lower end of their interval, then, apart and unranked, the provisional ones (fewer than
 * minMatches rated matches).
 */
export function leaderboardTables(entries, minMatches, none) {
  if (!entries.length) return el('p', { class: 'empty' }, none);
  const heads = ['#', 'Agent', 'Rating', '95% interval', 'Rated matches', 'W / L / T', 'Score', 'Mean payoff'];
  const table = (id, es) =>
    el(
      'div',
      { class: 'scroll' },
      el(
        'table',
        { class: 'grid leaderboard', id },
        el('thead', {}, el('tr', {}, heads.map((h) => el('th', {}, h)))),
        el(
          'tbody',
          {},
          es.map((e) =>
            el(
              'tr',
              {},
              el('td', {}, e.rank ? String(e.rank) : '–'),
              el('td', {}, el('strong', { class: 'agent', title: e.agent }, e.agent)),
              el('td', { class: 'num' }, String(Math.round(e.rating || 0))),
              el('td', { class: 'num nowrap', title: 'the ranking uses the lower end' }, fmtInterval(e.ratingLow, e.ratingHigh)),
              el('td', { class: 'num' }, fmtNum(e.matches)),
              el('td', { class: 'num nowrap' }, `${e.wins || 0} / ${e.losses || 0} / ${e.ties || 0}`),
              el('td', { class: 'num' }, fmtRate(e.score || 0)),
              el('td', { class: 'num' }, fmtNum(e.meanPayoff || 0)),
            ),
          ),
        ),
      ),
    );
  const ranked = entries.filter((e) => !e.provisional);
  const provisional = entries.filter((e) => e.provisional);
  const min = Number(minMatches || 0);
  return [
    ranked.length ? table('leaderboard', ranked) : el('p', { class: 'empty' }, `No agent has ${plural(min, 'rated match', 'rated matches')} yet, so none is ranked.`),
    provisional.length
      ? [el('h3', {}, 'Provisional'), el('p', { class: 'small muted' }, `Fewer than ${plural(min, 'rated match', 'rated matches')}: too few to rank among the others yet.`), table('leaderboard-provisional', provisional)]
      : null,
    el('p', { class: 'small muted' }, 'Ranked by the lower end of the 95% interval: an agent ranks high when its rating is high for sure, not by a lucky start.'),
  ];
}

function renderStandings(st, parts) {
  if (!newerStandings(st, parts.shown)) return;
  parts.shown = st;
  const total = Number(st.matches || 0);
  const ended = Number(st.ended || 0);
  parts.progressBar.style.width = total ? `${(100 * ended) / total}%` : '0';
  parts.progressText.textContent = `${ended} of ${plural(total, 'match', 'matches')} ended${st.void ? `, ${st.void} void` : ''}${st.complete ? ' — complete' : ''}.`;
  parts.state.className = st.complete ? 'tag ended' : 'tag live';
  parts.state.textContent = st.complete ? 'complete' : 'live';
  if (st.pending) {
    // Only the counts so far: the tables already drawn stay until the whole standings come.
    if (!parts.drawn) fill(parts.leaderboard, el('p', { class: 'empty' }, 'Computing the standings…'));
    return;
  }
  parts.drawn = true;
  fill(parts.leaderboard, leaderboardTables(st.leaderboard || [], st.minMatches, 'No rated match yet.'));
  const ag = st.agents || [];
  fill(
    parts.agents,
    ag.length
      ? el(
          'div',
          { class: 'scroll' },
          el(
          'table',
          { class: 'grid small' },
          el('thead', {}, el('tr', {}, ['Agent', 'Matches', 'Void', 'Wins / decisive', 'Win rate', 'Mean payoff', 'Agreements', 'Refused', 'Faulted'].map((h) => el('th', {}, h)))),
          el('tbody', {}, ag.map((a) => el('tr', {}, el('td', {}, a.label), el('td', { class: 'num' }, fmtNum(a.matches)), el('td', { class: 'num' }, fmtNum(a.void)), el('td', { class: 'num' }, `${a.wins || 0} / ${a.decisive || 0}`), el('td', { class: 'num' }, fmtRate(a.winRate)), el('td', { class: 'num' }, a.meanPayoff === undefined ? '–' : fmtNum(a.meanPayoff)), el('td', { class: 'num' }, fmtRate(a.agreementRate)), el('td', { class: 'num' }, fmtNum(a.refused)), el('td', { class: 'num' }, fmtNum(a.faulted))))),
          ),
        )
      : el('p', { class: 'empty' }, 'Nothing yet.'),
  );
  const p = st.pairs;
  const seats = st.seats || ['P1', 'P2'];
  if (p && (p.rows || []).length) {
    const o = { rowSeat: `${seats[1] || 'P2'}`, colSeat: `${seats[0] || 'P1'}` };
    fill(
      parts.heat,
      heatmaps(
        new Set([...(p.rows || []), ...(p.cols || [])]).size,
        heatmap(p, `Win rate of ${p.seatName || seats[p.seat || 0]}`, (c) => c.winRate, { ...o, rate: true, id: 'win-rate' }),
        heatmap(p, `Mean payoff of ${seats[0] || 'P1'}`, (c) => c.payoffSeat0, { ...o, id: 'payoff-seat0' }),
        heatmap(p, `Mean payoff of ${seats[1] || 'P2'}`, (c) => c.payoffSeat1, { ...o, id: 'payoff-seat1' }),
      ),
      el('p', { class: 'small muted' }, `Rows: the agent in ${seats[1] || 'P2'}; columns: the agent in ${seats[0] || 'P1'}, by the numbers of the rows. Hover a cell for its number of matches.`),
    );
  } else {
    fill(parts.heat, el('p', { class: 'empty' }, 'Heat maps are drawn for two-player games once matches end.'));
  }
  fill(
    parts.tables,
    (st.tables || []).map((t) =>
      el(
        'details',
        {},
        el('summary', {}, t.title),
        t.note ? el('p', { class: 'small muted' }, t.note) : null,
        el('div', { class: 'scroll' }, el('table', { class: 'grid small' }, el('thead', {}, el('tr', {}, (t.header || []).map((h) => el('th', {}, h)))), el('tbody', {}, (t.rows || []).map((r) => el('tr', {}, (r.cells || []).map((c) => el('td', {}, c))))))),
      ),
    ),
  );
}

function viewTournament(id) {
  const parts = {
    state: el('span', { class: 'tag live', id: 'tournament-state' }, 'live'),
    progressBar: el('div'),
    progressText: el('p', { class: 'muted', id: 'progress' }, 'Loading…'),
    leaderboard: el('div'),
    agents: el('div'),
    heat: el('div', { id: 'heatmaps' }),
    tables: el('div'),
  };
  const info = el('div');
  const matches = el('tbody', { id: 'tournament-matches' });
  const matchesNav = el('div');
  const msg = el('div');
  fill(
    app,
    el('div', { class: 'toolbar' }, el('h1', {}, `Tournament ${id}`), parts.state, el('span', { class: 'grow' }), link('#/', 'All matches')),
    msg,
    el('section', { class: 'card' }, info, el('div', { class: 'progress' }, parts.progressBar), parts.progressText),
    el('section', { class: 'card', id: 'leaderboard-card' }, el('h2', {}, 'Leaderboard'), parts.leaderboard),
    el('section', { class: 'card' }, el('h2', {}, 'Heat maps'), parts.heat),
    el('section', { class: 'card' }, el('h2', {}, 'Agents'), parts.agents),
    el('section', { class: 'card' }, el('h2', {}, 'Report tables'), parts.tables),
    el('section', { class: 'card' }, el('h2', {}, 'Matches'), el('div', { class: 'scroll' }, el('table', { class: 'grid small stack' }, el('thead', {}, el('tr', {}, ['Match', 'Players', 'State', 'Payoffs'].map((h) => el('th', {}, h)))), matches)), matchesNav),
  );
  tournaments('GetTournament', { tournamentId: id })
    .then((r) => {
      const s = r.spec || {};
      fill(info, el('p', {}, el('strong', {}, s.game), ` · ${plural(s.gamesPerAssignment, 'game', 'games')} per seat assignment · entrants: `, (s.entrants || []).map((e) => el('span', { class: 'pill', title: e.address }, e.label))));
      if (r.standings) renderStandings(r.standings, parts);
    })
    .catch((err) => fill(msg, banner(err)));
  let refreshMatches = () => {};
  const close = follow(
    `/api/v1/tournaments/${encodeURIComponent(id)}/standings`,
    {
      standings: (st) => {
        renderStandings(st, parts);
        refreshMatches();
      },
      error: (e) => fill(msg, banner(e.message || 'the stream failed')),
    },
    (s) => setConn(s),
  );
  const pages = pager(
    'tournament-matches',
    async (token) => {
      const r = await referee('ListMatches', { tournamentId: id, pageSize: 100, pageToken: token || undefined });
      return { items: r.matches || [], next: r.nextPageToken };
    },
    (xs) =>
      fill(
        matches,
        xs.map((x) => {
          const names = seatNames(x.seats);
          return el('tr', {}, el('td', {}, matchLink(x.matchId)), el('td', {}, players(x.seats)), el('td', {}, x.state === 'MATCH_STATE_RUNNING' ? el('span', { class: 'tag live' }, 'live') : causeText((x.outcome || {}).cause)), el('td', {}, ((x.outcome || {}).payoffs || []).map((p, i) => `${names[i]}: ${fmtNum(p)}`).join(', ')));
        }),
      ),
  );
  matchesNav.append(pages.nav);
  const listMatches = async () => {
    try {
      await pages.refresh();
    } catch {
      // the standings stream says what matters
    }
  };
  refreshMatches = listMatches;
  const stopPoll = poll(listMatches, 4000);
  return () => {
    close();
    stopPoll();
    setConn(null);
  };
}

// ---- leaderboard --------------------------------------------------------------------------

async function viewLeaderboard(query) {
  const out = el('div');
  const select = el('select', { id: 'lb-game' });
  fill(app, el('div', { class: 'toolbar' }, el('h1', {}, 'Leaderboard'), el('label', {}, 'Game ', select)), out);
  let games = [];
  try {
    games = (await referee('ListGames', {})).games || [];
  } catch (err) {
    fill(out, banner(err));
    return () => {};
  }
  fill(select, games.map((g) => el('option', { value: g.name }, g.name)));
  select.value = query.get('game') || 'ultimatum';
  const load = async () => {
    fill(out, el('p', { class: 'muted' }, 'Loading…'));
    try {
      const r = await analytics('GetLeaderboard', { filter: { game: select.value } });
      fill(
        out,
        el(
          'section',
          { class: 'card' },
          el('p', { class: 'muted small' }, `${plural(r.matches, 'match', 'matches')} rated, ${plural(r.voidMatches, 'void match', 'void matches')} left out. ${r.method || ''}`),
          leaderboardTables(r.entries || [], r.minMatches, 'No rated match of this game yet.'),
        ),
      );
    } catch (err) {
      fill(out, banner(err.status === 503 ? 'Analytics is not running here, so there are no ratings.' : err));
    }
  };
  select.addEventListener('change', () => {
    history.replaceState(null, '', `#/leaderboard?game=${encodeURIComponent(select.value)}`);
    load();
  });
  load();
  return () => {};
}

// ---- forms --------------------------------------------------------------------------------

/**
 * onSubmit runs act when form is submitted, with its button disabled meanwhile; an error is
 * shown under the form and the button given back (on success act has moved the page on).
 */
function onSubmit(form, submit, error, act) {
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    submit.disabled = true;
    try {
      await act();
    } catch (err) {
      error.textContent = err.message;
      submit.disabled = false;
    }
  });
}

let catalogue = null;

async function loadCatalogue() {
  if (!catalogue) {
    // The gateway's public list of registered bots (no endpoints); without one, a registered
    // bot is picked by typing its address.
    const [g, a, r] = await Promise.all([referee('ListGames', {}), referee('ListAgents', {}), getJSON('/api/v1/bots').catch(() => ({}))]);
    catalogue = { games: g.games || [], agents: a.agents || [], bots: r.bots || [] };
  }
  return catalogue;
}

/** registeredBots picks the registered bots a form may offer: not retired, and playing game when one is given (a bot registered with no games plays any). */
export function registeredBots(bots, game) {
  return (bots || []).filter((b) => b.address && !b.retired && (!game || !(b.games || []).length || b.games.includes(game)));
}

/** agentPicker is a select of agents (built-in, registered, human, other address) with an address input. */
function agentPicker(agents, { allowHuman, initial, name, bots = [] }) {
  const select = el(
    'select',
    { name: `${name}-agent`, dataset: { agent: name } },
    el('optgroup', { label: 'Built-in' }, agents.map((a) => el('option', { value: `builtin:${a.name}`, title: a.summary }, a.name))),
    bots.length ? el('optgroup', { label: 'Registered bots' }, bots.map((b) => el('option', { value: b.address, title: (b.games || []).join(', ') || 'any game' }, `${b.team}/${b.name}${b.version ? ` ${b.version}` : ''}`))) : null,
    allowHuman ? el('optgroup', { label: 'A person' }, el('option', { value: 'human' }, 'human (you, in this browser)')) : null,
    el('optgroup', { label: 'Another agent' }, el('option', { value: 'other' }, 'address…')),
  );
  const address = el('input', { type: 'text', name: `${name}-address`, placeholder: 'bot:TEAM/NAME, grpc://host:port or builtin:NAME?key=value', hidden: true });
  select.value = initial;
  const sync = () => {
    address.hidden = select.value !== 'other';
  };
  select.addEventListener('change', sync);
  sync();
  return {
    select,
    address,
    value: () => (select.value === 'other' ? address.value.trim() : select.value),
    isHuman: () => select.value === 'human',
  };
}

/** paramInputs renders the game's parameters; read() returns those the person changed. */
function paramInputs(game) {
  const inputs = (game.params || []).map((p) => {
    let input;
    if (p.kind === 'PARAM_KIND_BOOL') {
      input = el('select', { name: `param-${p.name}`, dataset: { param: p.name } }, el('option', { value: '' }, `default (${p.defaultValue || 'false'})`), el('option', { value: 'true' }, 'true'), el('option', { value: 'false' }, 'false'));
    } else {
      input = el('input', { type: 'text', name: `param-${p.name}`, dataset: { param: p.name }, placeholder: p.defaultValue || '', inputmode: p.kind === 'PARAM_KIND_INT' ? 'numeric' : undefined });
    }
    return { p, input };
  });
  return {
    node: inputs.length
      ? el('div', { class: 'form-grid' }, inputs.map(({ p, input }) => [el('label', { for: `param-${p.name}` }, p.name), input, el('div', { class: 'desc' }, p.description || '')]))
      : el('p', { class: 'muted' }, 'This game takes no parameters.'),
    read() {
      const out = {};
      for (const { p, input } of inputs) if (input.value.trim() !== '') out[p.name] = input.value.trim();
      return out;
    },
  };
}

async function typedParams(game, values) {
  if (Object.keys(values).length === 0) return undefined;
  return (await referee('ParseParams', { game, params: values })).params;
}

function tabs(active) {
  return el(
    'div',
    { class: 'tabs', role: 'tablist' },
    el('button', { type: 'button', role: 'tab', 'aria-selected': String(active === 'match'), onclick: () => (location.hash = '#/new') }, 'A match'),
    el('button', { type: 'button', role: 'tab', 'aria-selected': String(active === 'tournament'), onclick: () => (location.hash = '#/new/tournament') }, 'A tournament'),
  );
}

async function viewNewMatch(query) {
  fill(app, el('h1', {}, 'Start a match'), tabs('match'), el('p', { class: 'muted' }, 'Loading the games…'));
  let cat;
  try {
    cat = await loadCatalogue();
  } catch (err) {
    fill(app, el('h1', {}, 'Start a match'), banner(err));
    return () => {};
  }
  const gameSel = el('select', { name: 'game', id: 'game' }, cat.games.map((g) => el('option', { value: g.name }, g.name)));
  gameSel.value = query.get('game') || (cat.games.some((g) => g.name === 'ultimatum') ? 'ultimatum' : cat.games[0].name);
  const desc = el('p', { class: 'muted' });
  const seatsBox = el('div', { id: 'seats' });
  const paramsBox = el('div');
  const seed = el('input', { type: 'text', name: 'seed', inputmode: 'numeric', placeholder: 'random' });
  const timeout = el('input', { type: 'number', name: 'move-timeout', min: '1', max: '3600', value: '10' });
  let timeoutTouched = false;
  timeout.addEventListener('input', () => (timeoutTouched = true));
  const personName = el('input', { type: 'text', name: 'person', placeholder: 'optional', maxlength: '32' });
  const reveal = el('input', { type: 'checkbox', name: 'reveal' });
  const error = el('p', { class: 'error', role: 'alert' });
  const submit = el('button', { type: 'submit', class: 'primary', id: 'start-match' }, 'Start the match');
  let pickers = [];
  let labels = [];
  let params = null;

  const onAgents = () => {
    const human = pickers.some((p) => p.isHuman());
    // Left empty with a person in a seat: the referee gives the organiser's time for people.
    if (!timeoutTouched) timeout.value = human ? '' : '10';
    timeout.placeholder = human ? 'time for people' : '';
    reveal.disabled = human;
    if (human) reveal.checked = false;
  };
  const renderGame = () => {
    const g = cat.games.find((x) => x.name === gameSel.value);
    desc.textContent = g.description || '';
    const roles = g.seatRoles || [];
    const first = query.get('agents') ? query.get('agents').split(',') : [];
    const bots = registeredBots(cat.bots, g.name);
    pickers = (g.seats || []).map((s, i) => agentPicker(cat.agents, { allowHuman: true, initial: first[i] || 'builtin:random', name: `seat-${i}`, bots }));
    labels = pickers.map((_, i) => el('input', { type: 'text', name: `seat-${i}-label`, placeholder: 'label (optional)' }));
    fill(
      seatsBox,
      (g.seats || []).map((s, i) => el('div', { class: 'seat-row' }, el('strong', {}, s, roles[i] ? el('span', { class: 'muted small' }, ` ${roles[i]}`) : null), el('div', { class: 'pick' }, pickers[i].select, pickers[i].address), labels[i])),
    );
    for (const p of pickers) p.select.addEventListener('change', onAgents);
    params = paramInputs(g);
    fill(paramsBox, params.node);
    onAgents();
  };
  gameSel.addEventListener('change', renderGame);

  const form = el(
    'form',
    { id: 'new-match', class: 'card' },
    el('div', { class: 'form-grid' }, el('label', { for: 'game' }, 'Game'), gameSel),
    desc,
    el('h2', {}, 'Players'),
    el('p', { class: 'muted small' }, 'A built-in agent by name, a person (human: you play that seat from this browser), or the address of a registered agent.'),
    seatsBox,
    el('div', { class: 'form-grid' }, el('label', {}, 'Your name'), personName, el('div', { class: 'desc' }, 'Shown to the other players when you take a human seat.')),
    el('h2', {}, 'Parameters'),
    el('p', { class: 'muted small' }, 'Leave a field empty for its default (shown greyed).'),
    paramsBox,
    el('h2', {}, 'Match'),
    el(
      'div',
      { class: 'form-grid' },
      el('label', {}, 'Seed'),
      seed,
      el('label', {}, 'Seconds per move'),
      timeout,
      el('div', { class: 'desc' }, 'A person needs longer than a program: left empty with a human seat, each move gets the organiser’s time for people (120 s unless the organiser set another).'),
      el('label', {}, 'Show private parts'),
      el('label', {}, reveal, ' let spectators read private messages and reasoning (never with a human seat)'),
    ),
    error,
    submit,
  );
  onSubmit(form, submit, error, async () => {
    const game = gameSel.value;
    const agents = pickers.map((p) => p.value());
    if (agents.some((a) => !a)) throw new Error('every seat needs an agent');
    const typed = await typedParams(game, params.read());
    // Reserve a seat for each human: the match gets the seat's address, this page its token.
    const seats = [];
    for (let i = 0; i < agents.length; i++) {
      if (agents[i] !== 'human') continue;
      let r;
      try {
        r = await postJSON('/api/v1/seats', personName.value.trim() ? { name: personName.value.trim() } : {});
      } catch (err) {
        if (err.status === 404) throw new Error('this gateway does not host human seats: run `parley up` to play from the page');
        throw err;
      }
      agents[i] = r.agent;
      seats.push({ seat: i, url: r.url });
    }
    const req = { game, agents, labels: labels.map((l) => l.value.trim()) };
    if (timeout.value.trim()) req.limits = { moveTimeout: `${Number(timeout.value) || 10}s` };
    if (!req.labels.some((l) => l)) delete req.labels;
    if (typed) req.params = typed;
    if (seed.value.trim()) req.seed = seed.value.trim();
    if (reveal.checked) req.revealPrivate = true;
    const r = await referee('StartMatch', req);
    if (r.seed) startedSeeds.put(r.matchId, r.seed);
    if (seats.length === 1) {
      location.href = seats[0].url;
      return;
    }
    if (seats.length > 1) {
      const g = cat.games.find((x) => x.name === game);
      fill(
        app,
        el('h1', {}, 'Match started'),
        el(
          'section',
          { class: 'card links' },
          el('p', {}, 'Each human seat has its own page; open each where its player sits:'),
          r.seed ? el('p', { class: 'small muted' }, `Seed ${r.seed}.`) : null,
          seats.map((s) => el('p', {}, el('a', { href: s.url, target: '_blank', rel: 'noopener' }, `Play ${g.seats[s.seat]}`))),
          el('p', {}, matchLink(r.matchId)),
        ),
      );
      return;
    }
    location.hash = `#/match/${encodeURIComponent(r.matchId)}`;
  });
  fill(app, el('h1', {}, 'Start a match'), tabs('match'), form);
  renderGame();
  return () => {};
}

async function viewNewTournament() {
  fill(app, el('h1', {}, 'Start a tournament'), tabs('tournament'), el('p', { class: 'muted' }, 'Loading the games…'));
  let cat;
  try {
    cat = await loadCatalogue();
  } catch (err) {
    fill(app, el('h1', {}, 'Start a tournament'), banner(err));
    return () => {};
  }
  const gameSel = el('select', { name: 'game', id: 'game' }, cat.games.map((g) => el('option', { value: g.name }, g.name)));
  gameSel.value = cat.games.some((g) => g.name === 'ultimatum') ? 'ultimatum' : cat.games[0].name;
  const entrantsBox = el('div', { id: 'entrants' });
  const paramsBox = el('div');
  const games = el('input', { type: 'number', name: 'games', min: '1', max: '1000', value: '2' });
  const concurrency = el('input', { type: 'number', name: 'concurrency', min: '1', max: '64', value: '4' });
  const timeout = el('input', { type: 'number', name: 'move-timeout', min: '1', max: '3600', value: '10' });
  const seed = el('input', { type: 'text', name: 'seed', inputmode: 'numeric', placeholder: 'random' });
  const selfPlay = el('input', { type: 'checkbox', name: 'self-play' });
  const reveal = el('input', { type: 'checkbox', name: 'reveal' });
  const error = el('p', { class: 'error', role: 'alert' });
  const submit = el('button', { type: 'submit', class: 'primary', id: 'start-tournament' }, 'Start the tournament');
  const entrants = [];
  let params = null;
  const addEntrant = (initial) => {
    const i = entrants.length;
    const picker = agentPicker(cat.agents, { allowHuman: false, initial, name: `entrant-${i}`, bots: registeredBots(cat.bots) });
    const label = el('input', { type: 'text', name: `entrant-${i}-label`, placeholder: 'label (default: the name)' });
    const row = el('div', { class: 'seat-row' }, el('strong', {}, `Entrant ${i + 1}`), el('div', { class: 'pick' }, picker.select, picker.address), label);
    const entry = { picker, label, row };
    const remove = el('button', { type: 'button', title: 'remove' }, '×');
    remove.addEventListener('click', () => {
      entrants.splice(entrants.indexOf(entry), 1);
      row.remove();
    });
    row.append(remove);
    entrants.push(entry);
    entrantsBox.append(row);
  };
  const renderGame = () => {
    params = paramInputs(cat.games.find((x) => x.name === gameSel.value));
    fill(paramsBox, params.node);
  };
  gameSel.addEventListener('change', renderGame);
  addEntrant('builtin:fair');
  addEntrant('builtin:random');
  const form = el(
    'form',
    { id: 'new-tournament', class: 'card' },
    el('div', { class: 'form-grid' }, el('label', { for: 'game' }, 'Game'), gameSel),
    el('h2', {}, 'Entrants'),
    entrantsBox,
    el('button', { type: 'button', onclick: () => addEntrant('builtin:random') }, 'Add an entrant'),
    el('h2', {}, 'Parameters'),
    paramsBox,
    el('h2', {}, 'Schedule'),
    el(
      'div',
      { class: 'form-grid' },
      el('label', {}, 'Games per seat assignment'),
      games,
      el('label', {}, 'Matches at once'),
      concurrency,
      el('label', {}, 'Seconds per move'),
      timeout,
      el('label', {}, 'Seed'),
      seed,
      el('label', {}, 'Self-play'),
      el('label', {}, selfPlay, ' an agent may hold several seats of a match'),
      el('label', {}, 'Show private parts'),
      el('label', {}, reveal, ' let spectators read private messages and reasoning'),
    ),
    error,
    submit,
  );
  onSubmit(form, submit, error, async () => {
    const game = gameSel.value;
    const typed = await typedParams(game, params.read());
    const req = {
      game,
      entrants: entrants.map((x) => ({ address: x.picker.value(), label: x.label.value.trim() })),
      gamesPerAssignment: Number(games.value) || 1,
      concurrency: Number(concurrency.value) || 4,
      limits: { moveTimeout: `${Number(timeout.value) || 10}s` },
    };
    if (typed) req.params = typed;
    if (seed.value.trim()) req.seed = seed.value.trim();
    if (selfPlay.checked) req.selfPlay = true;
    if (reveal.checked) req.revealPrivate = true;
    const r = await tournaments('StartTournament', req);
    location.hash = `#/tournament/${encodeURIComponent(r.tournamentId)}`;
  });
  fill(app, el('h1', {}, 'Start a tournament'), tabs('tournament'), form);
  renderGame();
  return () => {};
}

// ---- routing ------------------------------------------------------------------------------

let routeSeq = 0;

async function route() {
  const seq = ++routeSeq;
  cleanup();
  cleanup = () => {};
  setConn(null);
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = hash.split('?');
  const query = new URLSearchParams(qs || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  let name = 'matches';
  let result;
  if (parts[0] === 'match' && parts[1]) {
    name = 'matches';
    result = viewMatch(parts[1]);
  } else if (parts[0] === 'tournament' && parts[1]) {
    name = 'matches';
    result = viewTournament(parts[1]);
  } else if (parts[0] === 'leaderboard') {
    name = 'leaderboard';
    result = viewLeaderboard(query);
  } else if (parts[0] === 'new' && parts[1] === 'tournament') {
    name = 'new-tournament';
    result = viewNewTournament(query);
  } else if (parts[0] === 'new') {
    name = 'new';
    result = viewNewMatch(query);
  } else {
    result = viewMatches(query);
  }
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.route === name);
  const c = await result;
  if (typeof c !== 'function') return;
  if (seq === routeSeq) cleanup = c;
  else c(); // the route changed while this view loaded
}

fitNarrow(app);
window.addEventListener('hashchange', route);
route();
