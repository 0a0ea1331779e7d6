// Unit tests of the web page's JavaScript (gateway/web/static/js), run in the browser by
// TestWebPage: the body of an async function that returns the list of failures.
const c = await import('/static/js/controls.js');
const f = await import('/static/js/format.js');
const v = await import('/static/js/views.js');
const app = await import('/static/js/app.js');
const h = await import('/static/js/heat.js');
const tr = await import('/static/js/transcript.js');
const fails = [];
const eq = (name, got, want) => {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) fails.push(`${name}: got ${g}, want ${w}`);
};

// Protojson leaves zero values out: seat 0, min 0.
const ult = { legalMoves: ['MOVE_KIND_REJECT', 'MOVE_KIND_PROPOSE'], proposalBounds: [{ side: 'SHARE_SIDE_GIVES', resource: 'Dollars', max: '100' }] };
const uf = c.proposalForms(ult);
eq('ultimatum: one form from the bounds', uf.length, 1);
eq('ultimatum: bound with defaults', uf[0].bounds, [{ seat: 0, side: 'gives', resource: 'Dollars', min: 0, max: 100, maxUnknown: false }]);
eq('ultimatum: starts at the minimum', c.initialAmounts(uf[0]), [0]);
eq('ultimatum: allocation', c.buildAllocation(uf[0], [40]), { shares: [{ seat: 0, gives: { Dollars: '40' } }] });
eq('ultimatum: over the maximum', c.checkAmounts(uf[0], [101]).problems, ['Dollars: 101 is outside 0–100']);
eq('ultimatum: not whole', c.checkAmounts(uf[0], [1.5]).ok, false);
eq('ultimatum: empty field', c.checkAmounts(uf[0], [NaN]).ok, false);
eq('legal kinds in page order', c.legalKinds(ult), ['MOVE_KIND_PROPOSE', 'MOVE_KIND_REJECT']);

// The editor starts from the seat's own latest proposal that fits the form.
const propose = (seat, shares) => ({ seat, move: { propose: { proposal: { allocation: { shares } } } } });
const ultHistory = [propose(undefined, [{ gives: { Dollars: '20' } }]), propose(1, [{ gives: { Dollars: '58' } }]), { fromReferee: true }];
eq('ultimatum: last own offer', c.lastAmounts(uf[0], ultHistory, 0), [20]);
eq('ultimatum: P2 picks up its own offer, not P1\'s', c.lastAmounts(uf[0], ultHistory, 1), [58]);
eq('ultimatum: a seat that has proposed nothing', c.lastAmounts(uf[0], ultHistory.slice(1), 0), null);
eq('ultimatum: nothing yet', c.lastAmounts(uf[0], [], 0), null);

// A form with a total: the amounts must add up exactly.
const coal = {
  proposalForms: [
    { label: 'coalition A', bounds: [{ side: 'SHARE_SIDE_RECEIVES', resource: 'g' }], totals: [{ side: 'SHARE_SIDE_RECEIVES', resource: 'g' }] },
    {
      label: 'coalition A+B',
      bounds: [{ side: 'SHARE_SIDE_RECEIVES', resource: 'g', max: '750' }, { seat: 1, side: 'SHARE_SIDE_RECEIVES', resource: 'g', max: '750' }],
      totals: [{ side: 'SHARE_SIDE_RECEIVES', resource: 'g', total: '750' }],
    },
  ],
  proposalBounds: [{ side: 'SHARE_SIDE_RECEIVES', resource: 'g', max: '1000' }],
};
const cf = c.proposalForms(coal);
eq('forms win over bounds', cf.map((x) => x.label), ['coalition A', 'coalition A+B']);
eq('even split of the total', c.initialAmounts(cf[1]), [375, 375]);
eq('uneven total splits within bounds', c.initialAmounts({ bounds: [{ seat: 0, side: 'receives', resource: 'g', min: 0, max: 2 }, { seat: 1, side: 'receives', resource: 'g', min: 0, max: 10 }], totals: [{ side: 'receives', resource: 'g', total: 7 }], issues: [] }), [2, 5]);
eq('total met', c.checkAmounts(cf[1], [700, 50]).ok, true);
eq('total missed', c.checkAmounts(cf[1], [700, 49]).problems, ['g receives must add up to 750 (now 749)']);
eq('sums', c.checkAmounts(cf[1], [700, 49]).sums.map((s) => s.sum), [749]);
eq('allocation of two seats', c.buildProposal(cf[1], [500, 250]), { allocation: { shares: [{ seat: 0, receives: { g: '500' } }, { seat: 1, receives: { g: '250' } }] } });
eq('coalition: the latest own offer that fits this form', c.lastAmounts(cf[1], [
  propose(0, [{ receives: { g: '500' } }, { seat: 1, receives: { g: '250' } }]),
  propose(0, [{ receives: { g: '400' } }, { seat: 2, receives: { g: '350' } }]),
], 0), [500, 250]);
eq('coalition: an offer missing the total is not used', c.lastAmounts(cf[1], [propose(0, [{ receives: { g: '500' } }, { seat: 1, receives: { g: '200' } }])], 0), null);
eq('message term forms', c.termForms({ messageTermForms: coal.proposalForms }).length, 2);
eq('no term forms', c.termForms({}), []);

// Trading: both sides give; bounds of one seat share one SeatShare.
const trade = c.proposalForms({ proposalBounds: [{ side: 'SHARE_SIDE_GIVES', resource: 'X', max: '25' }, { side: 'SHARE_SIDE_GIVES', resource: 'Y', max: '5' }, { seat: 1, side: 'SHARE_SIDE_GIVES', resource: 'Y', max: '25' }] })[0];
eq('trade allocation', c.buildAllocation(trade, [3, 0, 4]), { shares: [{ seat: 0, gives: { X: '3', Y: '0' } }, { seat: 1, gives: { Y: '4' } }] });
// What the other seat gives out of holdings nobody shows: no known upper limit.
const open = c.proposalForms({ proposalBounds: [{ side: 'SHARE_SIDE_GIVES', resource: 'X', max: '25' }, { seat: 1, side: 'SHARE_SIDE_GIVES', resource: 'Y', max: '9223372036854775807', maxUnknown: true }] })[0];
eq('no known limit: a large amount passes', c.checkAmounts(open, [0, 40]).ok, true);
eq('no known limit: still no less than the minimum', c.checkAmounts(open, [0, -1]).problems, ['Y: -1 is outside 0 or more (no known limit)']);
eq('no known limit: the range as written', c.rangeText(open.bounds[1]), '0 or more (no known limit)');
eq('a known limit as written', c.rangeText(open.bounds[0]), '0–25');

// Deals (deliberation): one option per issue.
const del = { proposalForms: [{ label: 'final deal', issues: [{ id: 'A', label: 'Site', options: [{ id: 'A1', label: 'water' }, { id: 'A2', label: 'land' }] }, { id: 'B', options: [{ id: 'B1' }] }] }] };
const df = c.proposalForms(del)[0];
eq('deal incomplete', c.dealComplete(df, { A: 'A2' }), false);
eq('deal complete', c.dealComplete(df, { A: 'A2', B: 'B1' }), true);
eq('deal', c.buildProposal(df, { A: 'A2', B: 'B1' }), { deal: { choices: [{ issue: 'A', option: 'A2' }, { issue: 'B', option: 'B1' }] } });
eq('deal text', f.formatDeal({ choices: [{ issue: 'A', option: 'A2' }, { issue: 'B', option: 'B1' }] }, df.issues), 'A2 (land), B1');
// What a proposal is worth to the seat, from its form (ProposalForm.worth): options' points,
// or the points of the units the seat itself receives.
const dw = c.proposalForms({ proposalForms: [{ ...del.proposalForms[0], worth: { optionPoints: { A1: '3', A2: '7', B1: '5' }, minimum: '0' } }] })[0];
eq('deal worth', c.worthOf(dw, { A: 'A2', B: 'B1' }), 12);
eq('deal worth with a minimum of 0', c.worthText(dw, 12), 'This proposal is worth 12 points to you (your minimum is 0).');
eq('a form without worth', c.worthOf(df, { A: 'A2', B: 'B1' }), null);
const dnd = c.proposalForms({
  proposalForms: [
    {
      bounds: ['book', 'hat'].flatMap((r) => [{ side: 'SHARE_SIDE_RECEIVES', resource: r, max: '2' }, { seat: 1, side: 'SHARE_SIDE_RECEIVES', resource: r, max: '2' }]),
      worth: { receivedUnitPoints: { book: '2', hat: '3' } },
    },
  ],
})[0];
eq('division worth: the units this seat receives', [c.worthOf(dnd, [1, 1, 2, 1], 0), c.worthOf(dnd, [1, 1, 2, 1], 1)], [8, 5]);
eq('division worth without a minimum', c.worthText(dnd, 8), 'This proposal is worth 8 points to you.');
eq('points per option', [...v.optionPoints({ issues: df.issues, points: [{ points: [3, 7] }, { points: [5] }] })], [['A1', 3], ['A2', 7], ['B1', 5]]);

// Messages.
eq('required slots', c.messageSlots({ requiredMessages: [{ to: [1] }, {}] }), [{ to: [1], required: true }, { to: [], required: true }]);
eq('optional public message', c.messageSlots({}), [{ to: [], required: false }]);
eq('missing required message', c.checkMessages([{ to: [2], text: ' ', required: true }, { to: [], text: '', required: false }], () => 'C'), ['write the message to C']);
eq(
  'action with messages and a note',
  c.buildAction({ kind: 'MOVE_KIND_SAY' }, [{ to: [1], text: 'hi', required: true }, { to: [], text: '', required: false }], ' plan '),
  { move: { say: {} }, messages: [{ text: 'hi', to: [1] }], privateNotes: ' plan ' },
);
eq('accept', c.buildAction({ kind: 'MOVE_KIND_ACCEPT' }), { move: { accept: {} } });
eq('choose', c.buildAction({ kind: 'MOVE_KIND_CHOOSE', option: 'defect' }), { move: { choose: { option: 'defect' } } });
eq('propose with an offer in a message', c.buildAction({ kind: 'MOVE_KIND_PROPOSE', proposal: { deal: { choices: [] } } }, [{ to: [], text: '', proposal: { allocation: { shares: [] } }, required: false }]), {
  move: { propose: { proposal: { deal: { choices: [] } } } },
  messages: [{ text: '', proposal: { allocation: { shares: [] } } }],
});

// Time: the deadline, corrected for the difference between the clocks.
eq('time left', c.remainingMs('2026-01-01T00:00:10Z', '2026-01-01T00:00:00Z', 1000, 3000), 8000);
eq('no deadline', c.remainingMs(undefined, undefined, 0, 0), Infinity);
eq('clock', f.fmtClock(61000), '1:01');
eq('clock never negative', f.fmtClock(-5), '0:00');

// Readable terms.
eq('allocation text', f.formatAllocation({ shares: [{ gives: { Dollars: '40' } }, { seat: 1, receives: { g: '0' } }] }, ['P1', 'P2']), 'P1 gives 40 Dollars; P2 receives 0 g');
eq('move text', f.describeMove({ propose: { proposal: { allocation: { shares: [{ gives: { Dollars: '40' } }] } } } }, ['P1', 'P2']), 'proposes: P1 gives 40 Dollars');
eq('recipients', f.recipients([1, 2], ['A', 'B', 'C']), 'B and C (private)');
eq('public', f.recipients([], ['A']), 'everyone');
eq('humanize', f.humanize('standingOffer'), 'standing offer');
eq('view of a family the page does not know', f.viewOf({ game: 'nim', seat: 1, deadline: '2030-01-01T00:00:00Z', timeLimit: '10s', lastRejection: { code: 'REJECTION_CODE_ILLEGAL_MOVE' }, legalMoves: ['MOVE_KIND_CHOOSE'], nim: { heaps: ['3', '4'] } }), ['nim', { heaps: ['3', '4'] }]);
eq('no view', f.viewOf({ game: 'nim', lastRejection: { code: 'REJECTION_CODE_ILLEGAL_MOVE' } }), ['', null]);
eq('numbers', [f.fmtNum('12'), f.fmtNum(2.5), f.fmtNum(undefined)], ['12', '2.50', '0']);
eq('rates', [f.fmtRate(0.5), f.fmtRate(undefined)], ['50%', '–']);
eq('seat names', f.seatNames([{ name: 'P1' }, { seat: 1, name: 'P2' }]), ['P1', 'P2']);
eq('agent names', [f.agentName({ agent: { name: 'fair', version: '1' } }), f.agentName({ label: 'tough', agent: { name: 'fair' } })], ['fair 1', 'tough']);
eq('cause', f.causeText('END_CAUSE_AGREEMENT'), 'Agreement');
eq('fraction', [v.frac({ num: '3', den: '1' }), v.frac({ num: '1', den: '2' }), v.frac(undefined)], ['3', '0.50', '0']);

// Text from agents is always text, never markup.
const node = f.el('div', {}, '<img src=x onerror=alert(1)>');
eq('text stays text', [node.children.length, node.textContent], [0, '<img src=x onerror=alert(1)>']);

// Heat map colours: rates diverge around one half.
eq('heat: a half is white', h.heatColor(0.5, 0, 1, true), 'rgb(255, 255, 255)');
eq('heat: missing is grey', h.heatColor(undefined, 0, 1, true), '#f4f5f7');
// Contrast as WCAG 2 defines it: black on white 21:1, a colour on itself 1:1.
eq('contrast: black on white', Math.round(h.contrast([0, 0, 0], [255, 255, 255]) * 100) / 100, 21);
eq('contrast: the same colour', h.contrast([120, 30, 200], [120, 30, 200]), 1);
// Every cell colour of both palettes, with the ink chosen for it, passes AA (4.5:1); the dark
// ends of the palettes get white ink, never black.
for (const rate of [true, false]) {
  let worst = 21;
  for (let i = 0; i <= 200; i++) {
    const bg = h.heatRGB(i / 200, 0, 1, rate);
    const ink = h.heatInk(i / 200, 0, 1, rate) === '#fff' ? [255, 255, 255] : [0, 0, 0];
    worst = Math.min(worst, h.contrast(bg, ink));
  }
  eq(`heat ${rate ? 'rates' : 'payoffs'}: worst contrast passes AA`, worst >= 4.5, true);
}
eq('heat: white ink on the darkest red, green and blue', [h.heatInk(0, 0, 1, true), h.heatInk(1, 0, 1, true), h.heatInk(1, 0, 1, false)], ['#fff', '#fff', '#fff']);
eq('heat: black ink on white', h.heatInk(0.5, 0, 1, true), '#000');

// Counts with their nouns; a rating interval collapsed to a point is no interval.
eq('plurals', [f.plural(1, 'match', 'matches'), f.plural('2', 'match', 'matches'), f.plural(0, 'match', 'matches')], ['1 match', '2 matches', '0 matches']);
eq('intervals', [f.fmtInterval(1480.2, 1620.7), f.fmtInterval(1631, 1631.2)], ['1480–1621', '–']);
// A move in the rules' words follows its seat's name: the name and the full stop go.
eq('move words after the name', f.moveWords('P1 proposes: P1 gives 40 Dollars to P2 and keeps 60.', 'P1'), 'proposes: P1 gives 40 Dollars to P2 and keeps 60');
eq('move words naming another seat first', f.moveWords('P2 accepted P1\'s offer.', 'P1'), "P2 accepted P1's offer");
eq('move words alone', f.moveWords('A wrote privately to B and C.'), 'A wrote privately to B and C');
eq('move words: a name that is a prefix', f.moveWords('P10 waits.', 'P1'), 'P10 waits');

// Standings arrive from two places in any order; an older table never replaces a newer one.
eq('standings: first', app.newerStandings({ ended: 1 }, undefined), true);
eq('standings: later', app.newerStandings({ ended: 4, complete: true }, { ended: 3 }), true);
eq('standings: older', app.newerStandings({ ended: 3 }, { ended: 4, complete: true }), false);
eq('standings: same', app.newerStandings({ ended: 2 }, { ended: '2' }), true);
// Registered bots offered by the forms: active ones, of the game when one is given.
// A bot registered with no games plays any game (its JSON leaves games out).
const bots = [{ address: 'bot:a/x', games: ['ultimatum'] }, { address: 'bot:a/y', games: ['coalition'] }, { address: 'bot:b/z', games: ['ultimatum'], retired: true }, { address: 'bot:c/any' }];
eq('bots of a game', app.registeredBots(bots, 'ultimatum').map((b) => b.address), ['bot:a/x', 'bot:c/any']);
eq('bots of any game', app.registeredBots(bots).map((b) => b.address), ['bot:a/x', 'bot:a/y', 'bot:c/any']);
eq('no registry', app.registeredBots(undefined, 'ultimatum'), []);

// Heat maps: a win rate over only tied matches says so; a pair never played shows a dash.
const pairs = { rows: ['x', 'y'], cols: ['x', 'y'], cells: [{ cells: [{}, { matches: 2 }] }, { cells: [{ matches: 3, winRate: 0.5 }, {}] }] };
const heat = h.heatmap(pairs, 'Win rate', (c) => c.winRate, { rate: true, id: 't', rowSeat: 'P2', colSeat: 'P1' });
eq('heat map cells', [...heat.querySelectorAll('td')].map((td) => td.textContent), ['–', 'ties', '50%', '–']);
eq('heat map headers: numbered agents', [...heat.querySelectorAll('th')].map((th) => th.textContent), ['P2 \\ P1', '1', '2', '1. x', '2. y']);
eq('heat map: one match', heat.querySelectorAll('td')[1].title, 'x (P2) against y (P1): 2 matches, none decisive');

// The leaderboard: ranked agents, then the provisional ones apart.
const lb = f.el('div', {}, app.leaderboardTables([{ agent: 'a', rank: 1, matches: 30, ratingLow: 1500, ratingHigh: 1600 }, { agent: 'b', provisional: true, matches: 1, ratingLow: 1631, ratingHigh: 1631 }], 10, 'none'));
eq('leaderboard: ranked', [...lb.querySelectorAll('#leaderboard tbody td:nth-child(2)')].map((td) => td.textContent), ['a']);
eq('leaderboard: provisional apart', [...lb.querySelectorAll('#leaderboard-provisional tbody td')].slice(0, 4).map((td) => td.textContent), ['–', 'b', '0', '–']);
// A seat whose time ran out reads a sentence, not a status code.
const late = tr.renderEvent({ turn: 3, agentFault: { seat: 1, kind: 'FAULT_KIND_TIMEOUT', detail: 'no answer within the 2m0s a move allows' } }, { names: ['P1', 'P2'] });
eq('a timeout in words', late.textContent, 'turn 3 P2 ran out of time: no answer within the 2m0s a move allows; the default move is played.');

// Whom a live match waits for: asks until their seat answers, whatever the order they come in.
const ws = new tr.WaitingSeats();
ws.ask({ seat: 1, turn: 2, attempt: 1, deadline: 'd2' });
eq('waiting: one ask', ws.open().map((w) => w.seat), [1]);
ws.answer({ turn: 2, actionRefused: { seat: 1, attempt: 1 } });
eq('waiting: a refusal answers its attempt', ws.open().length, 0);
ws.ask({ seat: 1, turn: 2, attempt: 2, deadline: 'd2b' });
eq('waiting: asked again', ws.open().map((w) => w.attempt), [2]);
ws.answer({ turn: 2, actionTaken: { seat: 1, attempt: 2 } });
ws.ask({ seat: 1, turn: 2, attempt: 2, deadline: 'd2b' }); // the news comes after its answer
eq('waiting: an ask already answered is not taken', ws.open().length, 0);
ws.ask({ seat: 0, turn: 3, attempt: 1, deadline: 'd3' });
ws.ask({ seat: 1, turn: 3, attempt: 1, deadline: 'd3' });
ws.answer({ turn: 3, actionTaken: { attempt: 1 } }); // seat 0: protojson leaves it out
eq('waiting: simultaneous, one answered', ws.open().map((w) => w.seat), [1]);
ws.answer({ turn: 3, matchEnded: {} });
eq('waiting: the end answers all', ws.open().length, 0);

return fails;
