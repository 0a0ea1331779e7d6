package analyzecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
)

// equilibriaOptions are the flags of `analyze equilibria`.
type equilibriaOptions struct {
	games   []string
	compare bool
	all     bool
	scale   string
	mixed   mixedOptions
	// readFile reads a game file; os.ReadFile unless a test replaces it.
	readFile func(string) ([]byte, error)
}

// mixedOptions say how the mixed equilibria of a two-player game are computed.
type mixedOptions struct {
	// pivotWork bounds the exact arithmetic: tableau entries updated over all pivots.
	pivotWork int
	// one: one equilibrium by Lemke–Howson instead of all of them.
	one bool
}

// newEquilibriaCmd returns `analyze equilibria`. runF, when non-nil, replaces the run step.
func newEquilibriaCmd(deps *cli.Deps, runF func(context.Context, *equilibriaOptions) error) *cobra.Command {
	o := &equilibriaOptions{readFile: os.ReadFile, mixed: mixedOptions{pivotWork: equilibria.MaxPivotWork}}
	cmd := &cobra.Command{
		Use:   "equilibria GAME [GAME2 --compare]",
		Short: "Exact equilibria of a matrix game or a game tree given as data",
		Long: `Compute, exactly (rational arithmetic), the equilibria of a game given as data, of any
number of players.

GAME is a game file (YAML or JSON; format in referee/games/gamefile) or the name of a shipped
game (` + strings.Join(gamefile.Library(""), ", ") + `).

For a matrix game: every pure Nash equilibrium, whether each is Pareto-optimal (against all
profiles), the equilibria no other equilibrium Pareto-dominates, and the actions dominated by
another action (iterated elimination of strictly dominated actions; weakly dominated ones).
For two players also every extreme mixed equilibrium, degenerate games included, and the
maximal Nash subsets they form (every equilibrium lies in one); mixed equilibria of three or
more players are not computed, and the output says so. For a game tree: the subgame-perfect
equilibrium by backward induction with every tie reported, every outcome a subgame-perfect
equilibrium can reach, and the outcomes of the pure Nash equilibria of the tree's normal form.
With --compare and two matrix games: whether they have the same pure-equilibrium set, matching
actions by name when both games use the same names, else by position (and saying so).

Listing every mixed equilibrium enumerates the vertices of both players' best-response
polytopes, whose number grows exponentially with the actions: --pivot-work bounds the exact
arithmetic it may do (tableau entries updated, over all pivots), so that a large game is
refused, with a message, rather than tying up the machine; the default, 4000000, is a few
seconds of one core. With --one, one equilibrium instead, of a game of any size, by
the Lemke–Howson algorithm (exact, the same bound on its pivots): the path that starts by
dropping the label of the row player's first action.`,
		Example: `  parley analyze equilibria prisoners_dilemma
  parley analyze equilibria my-game.yaml
  parley analyze equilibria stag_hunt stag_hunt_2 --compare
  parley analyze equilibria golden_balls --scale 13600
  parley analyze equilibria big-game.yaml --pivot-work 100000000
  parley analyze equilibria big-game.yaml --one
  parley analyze equilibria --all`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.all && len(args) > 0:
				return cli.Usagef("--all takes no game")
			case o.all:
				return nil
			case o.compare && len(args) != 2:
				return cli.Usagef("--compare takes two games, got %d", len(args))
			case !o.compare && len(args) != 1:
				return cli.Usagef("give one game (or two with --compare), got %d", len(args))
			case o.mixed.pivotWork < 1:
				return cli.Usagef("--pivot-work must be at least 1, got %d", o.mixed.pivotWork)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.games = args
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runEquilibria(deps.Out, o)
		},
	}
	cmd.Flags().BoolVar(&o.compare, "compare", false, "compare the pure-equilibrium sets of two matrix games (actions matched by name, else by position)")
	cmd.Flags().BoolVar(&o.all, "all", false, "analyze every shipped game")
	cmd.Flags().StringVar(&o.scale, "scale", "", "multiply every payoff (a game's scale parameter, e.g. golden balls' jackpot); default the game's own")
	cmd.Flags().IntVar(&o.mixed.pivotWork, "pivot-work", equilibria.MaxPivotWork, "the most tableau entries the mixed equilibria's pivots may update in all; a game that needs more is refused (see above)")
	cmd.Flags().BoolVar(&o.mixed.one, "one", false, "find one mixed equilibrium by Lemke–Howson instead of listing them all: two-player games of any size")
	return cmd
}

// loadGame reads a game file, or a shipped game by name.
func loadGame(o *equilibriaOptions, name string) (*gamefile.File, error) {
	data, err := o.readFile(name)
	switch {
	case err == nil:
		f, err := gamefile.Parse(data)
		if err != nil {
			return nil, cli.Usagef("%s: %v", name, err)
		}
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		f, serr := gamefile.Shipped(name)
		if serr != nil {
			return nil, cli.Usagef("%s is neither a file nor a shipped game (shipped: %s)", name, strings.Join(gamefile.Library(""), ", "))
		}
		return f, nil
	default:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
}

func runEquilibria(out io.Writer, o *equilibriaOptions) error {
	names := o.games
	if o.all {
		names = gamefile.Library("")
	}
	files := make([]*gamefile.File, len(names))
	for i, n := range names {
		f, err := loadGame(o, n)
		if err != nil {
			return err
		}
		files[i] = f
	}
	var param *string
	if o.scale != "" {
		param = &o.scale
	}
	var matrices []*equilibria.Matrix
	for i, f := range files {
		if i > 0 {
			fmt.Fprintln(out)
		}
		switch f.Kind {
		case gamefile.KindMatrix:
			scale, err := gamefile.Scale(param, f.Table.GetScaleDefault())
			if err != nil {
				return cli.Usagef("%s: %v", names[i], err)
			}
			m, err := gamefile.MatrixOf(f.Table, scale)
			if err != nil {
				return cli.Usagef("%s: %v", names[i], err)
			}
			matrices = append(matrices, m)
			if err := writeMatrix(out, names[i], f.Table, scale, m, o.mixed); err != nil {
				return err
			}
		default:
			scale, err := gamefile.Scale(param, f.Tree.GetScaleDefault())
			if err != nil {
				return cli.Usagef("%s: %v", names[i], err)
			}
			t, err := gamefile.TreeOf(f.Tree, scale)
			if err != nil {
				return cli.Usagef("%s: %v", names[i], err)
			}
			if err := writeTree(out, names[i], f.Tree, t); err != nil {
				return err
			}
		}
	}
	if !o.compare {
		return nil
	}
	if len(matrices) != 2 {
		return cli.Usagef("--compare compares two matrix games")
	}
	fmt.Fprintln(out)
	writeCompare(out, names, [2]*matrixv1.Table{files[0].Table, files[1].Table}, [2]*equilibria.Matrix{matrices[0], matrices[1]})
	return nil
}

// matchActions matches b's actions to a's: by name when every player has the same action ids
// in both (in any order), else nil (by position).
func matchActions(a, b *matrixv1.Table) [][]int {
	aa, ba := gamefile.TableActions(a), gamefile.TableActions(b)
	if len(aa) != len(ba) {
		return nil
	}
	match := make([][]int, len(aa))
	for p := range aa {
		if len(aa[p]) != len(ba[p]) {
			return nil
		}
		for _, x := range aa[p] {
			k := slices.IndexFunc(ba[p], func(y *matrixv1.Action) bool { return y.GetId() == x.GetId() })
			if k < 0 {
				return nil
			}
			match[p] = append(match[p], k)
		}
	}
	return match
}

// writeCompare says whether two matrix games share their pure-equilibrium set, how their
// actions were matched, and each game's equilibria in its own labels.
func writeCompare(out io.Writer, names []string, t [2]*matrixv1.Table, m [2]*equilibria.Matrix) {
	match := matchActions(t[0], t[1])
	c := equilibria.ComparePureNash(m[0], m[1], match)
	if !c.SameShape {
		shape := func(m *equilibria.Matrix) string {
			var sizes []string
			for p := range m.Players() {
				sizes = append(sizes, fmt.Sprint(m.Actions(p)))
			}
			return strings.Join(sizes, " x ")
		}
		fmt.Fprintf(out, "Compare: not comparable: %s is %s, %s is %s.\n", names[0], shape(m[0]), names[1], shape(m[1]))
		return
	}
	how := "actions matched by name"
	if match == nil {
		var pairs []string
		players := gamefile.Players(t[0].GetPlayers())
		acts := [2][][]*matrixv1.Action{gamefile.TableActions(t[0]), gamefile.TableActions(t[1])}
		for p := range acts[0] {
			var eq []string
			for i, a := range acts[0][p] {
				eq = append(eq, a.GetId()+" = "+acts[1][p][i].GetId())
			}
			pairs = append(pairs, fmt.Sprintf("%s %s", players[p], strings.Join(eq, ", ")))
		}
		how = "actions matched by position, as their names differ: " + strings.Join(pairs, "; ")
	}
	both := fmt.Sprintf("%s has %s, %s has %s", names[0], profileSet(t[0], c.A), names[1], profileSet(t[1], c.B))
	if c.Same {
		same := "the same pure-equilibrium set"
		if match == nil {
			same += " under this matching"
		}
		fmt.Fprintf(out, "Compare (%s): %s: %s.\n", how, same, both)
		return
	}
	fmt.Fprintf(out, "Compare (%s): different pure-equilibrium sets: %s", how, both)
	if len(c.OnlyA) > 0 {
		fmt.Fprintf(out, "; only %s has %s", names[0], profileSet(t[0], c.OnlyA))
	}
	if len(c.OnlyB) > 0 {
		fmt.Fprintf(out, "; only %s has %s", names[1], profileSet(t[1], c.OnlyB))
	}
	fmt.Fprintln(out, ".")
}

func profileName(t *matrixv1.Table, p equilibria.Profile) string {
	acts := gamefile.TableActions(t)
	ids := make([]string, len(p))
	for player, a := range p {
		ids[player] = acts[player][a].GetId()
	}
	return "(" + strings.Join(ids, ", ") + ")"
}

func profileSet(t *matrixv1.Table, ps []equilibria.Profile) string {
	if len(ps) == 0 {
		return "no pure equilibrium"
	}
	var parts []string
	for _, p := range ps {
		parts = append(parts, profileName(t, p))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func title(name, t string) string {
	if t == "" {
		return name
	}
	return fmt.Sprintf("%s (%s)", t, name)
}

// writeMatrix prints the table and its equilibria.
func writeMatrix(out io.Writer, name string, t *matrixv1.Table, scale *big.Rat, m *equilibria.Matrix, mixed mixedOptions) error {
	players := gamefile.Players(t.GetPlayers())
	acts := gamefile.TableActions(t)
	if m.Players() == 2 {
		fmt.Fprintf(out, "%s: matrix game, %d x %d; rows %s, columns %s", title(name, t.GetTitle()), m.Rows(), m.Cols(), players[0], players[1])
	} else {
		var sizes []string
		for p := range m.Players() {
			sizes = append(sizes, fmt.Sprint(m.Actions(p)))
		}
		fmt.Fprintf(out, "%s: matrix game of %d players, %s actions; players %s", title(name, t.GetTitle()), m.Players(), strings.Join(sizes, " x "), strings.Join(players, ", "))
	}
	if scale.Cmp(big.NewRat(1, 1)) != 0 || t.GetScaleName() != "" {
		what := t.GetScaleName()
		if what == "" {
			what = "scale"
		}
		fmt.Fprintf(out, "; %s %s", what, equilibria.RatText(scale))
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	if m.Players() == 2 {
		fmt.Fprint(tw, "  ")
		for _, c := range t.GetCols() {
			fmt.Fprintf(tw, "\t%s", c.GetId())
		}
		fmt.Fprintln(tw)
		for i, r := range t.GetRows() {
			fmt.Fprintf(tw, "  %s", r.GetId())
			for j := range t.GetCols() {
				p := m.Payoffs(equilibria.Profile{i, j})
				fmt.Fprintf(tw, "\t%s, %s", equilibria.RatText(p[0]), equilibria.RatText(p[1]))
			}
			fmt.Fprintln(tw)
		}
	} else {
		fmt.Fprintf(tw, "  %s\tpayoffs\n", strings.Join(players, "\t "))
		for k := range m.Len() {
			pr := m.ProfileAt(k)
			fmt.Fprint(tw, " ")
			for p, a := range pr {
				fmt.Fprintf(tw, " %s\t", acts[p][a].GetId())
			}
			fmt.Fprintf(tw, "%s\n", m.Payoffs(pr))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pure := equilibria.PureNash(m)
	if len(pure) == 0 {
		fmt.Fprintln(out, "Pure Nash equilibria: none")
	} else {
		fmt.Fprintf(out, "Pure Nash equilibria: %d\n", len(pure))
	}
	for _, p := range pure {
		line := fmt.Sprintf("  %s paying %s: ", profileName(t, p), m.Payoffs(p))
		if dom := equilibria.ParetoDominators(m, p); len(dom) > 0 {
			line += "not Pareto-optimal, dominated by " + strings.TrimPrefix(strings.TrimSuffix(profileSet(t, dom), "}"), "{")
		} else {
			line += "Pareto-optimal"
		}
		fmt.Fprintln(out, line)
	}
	if len(pure) > 0 {
		fmt.Fprintf(out, "Pareto-optimal among the equilibria (none dominates them): %s\n", profileSet(t, equilibria.Undominated(m, pure)))
	}
	writeDominance(out, players, acts, equilibria.Dominated(m))
	if m.Players() > 2 {
		fmt.Fprintf(out, "Mixed equilibria: not computed: in games of %d players their probabilities can be irrational (roots of polynomial equations), so no exact method lists them all; the pure equilibria above are complete.\n", m.Players())
		return nil
	}
	if mixed.one {
		return writeOne(out, players, acts, m, mixed.pivotWork)
	}
	e, err := equilibria.ExtremeEquilibriaWithin(m, mixed.pivotWork)
	switch {
	case errors.Is(err, equilibria.ErrTooLarge):
		fmt.Fprintf(out, "Mixed equilibria: not computed (%v); a --pivot-work above %d lets it go further, --one finds one equilibrium by Lemke–Howson\n", err, mixed.pivotWork)
		return nil
	case err != nil:
		return err
	}
	writeExtreme(out, players, acts, e)
	return nil
}

// writeOne prints one equilibrium of a two-player game, found by Lemke–Howson from the first
// row's label.
func writeOne(out io.Writer, players []string, acts [][]*matrixv1.Action, m *equilibria.Matrix, pivotWork int) error {
	one, err := equilibria.LemkeHowson(m, 0, pivotWork)
	switch {
	case errors.Is(err, equilibria.ErrTooLarge):
		fmt.Fprintf(out, "One equilibrium (Lemke–Howson): not found (%v); a --pivot-work above %d lets the path go further\n", err, pivotWork)
		return nil
	case err != nil:
		return err
	}
	fmt.Fprintf(out, "One equilibrium (Lemke–Howson, exact: the path from dropping %s's %s, %d pivots; the others are not listed): %s: %s; %s: %s; expected payoffs %s\n",
		players[0], acts[0][0].GetId(), one.Pivots, players[0], mixDesc(one.RowMix, acts[0]), players[1], mixDesc(one.ColMix, acts[1]), one.Payoffs)
	return nil
}

// writeDominance prints iterated elimination of strictly dominated actions and the weakly
// dominated actions.
func writeDominance(out io.Writer, players []string, acts [][]*matrixv1.Action, d equilibria.Dominance) {
	if len(d.Steps) == 0 {
		fmt.Fprintln(out, "Strictly dominated actions (by another action): none")
	} else {
		var steps []string
		for _, s := range d.Steps {
			steps = append(steps, fmt.Sprintf("%s's %s (by %s)", players[s.Player], acts[s.Player][s.Action].GetId(), acts[s.Player][s.By].GetId()))
		}
		var left []string
		for p, rem := range d.Remaining {
			var ids []string
			for _, a := range rem {
				ids = append(ids, acts[p][a].GetId())
			}
			left = append(left, fmt.Sprintf("%s {%s}", players[p], strings.Join(ids, ", ")))
		}
		fmt.Fprintf(out, "Iterated elimination of strictly dominated actions (by another action): %s; left: %s\n", strings.Join(steps, ", "), strings.Join(left, ", "))
	}
	var weak []string
	for p, list := range d.Weak {
		for _, a := range list {
			weak = append(weak, fmt.Sprintf("%s's %s", players[p], acts[p][a].GetId()))
		}
	}
	if len(weak) == 0 {
		weak = []string{"none"}
	}
	fmt.Fprintf(out, "Weakly dominated actions (never better than another action, once worse): %s\n", strings.Join(weak, ", "))
}

// writeExtreme prints every extreme equilibrium of a two-player game and its maximal Nash
// subsets.
func writeExtreme(out io.Writer, players []string, acts [][]*matrixv1.Action, e *equilibria.Extreme) {
	strat := func(p, k int) string {
		mixes := e.RowStrategies
		if p == 1 {
			mixes = e.ColStrategies
		}
		return fmt.Sprintf("%s%d = %s", []string{"x", "y"}[p], k+1, mixDesc(mixes[k], acts[p]))
	}
	fmt.Fprintf(out, "Extreme equilibria (all of them, exact): %d\n", len(e.Equilibria))
	for k, eq := range e.Equilibria {
		x := e.Mixed(k)
		fmt.Fprintf(out, "  %s: %s; %s: %s; expected payoffs %s\n", players[0], strat(0, eq[0]), players[1], strat(1, eq[1]), x.Payoffs)
	}
	if len(e.Subsets) == len(e.Equilibria) {
		fmt.Fprintln(out, "Every equilibrium is one of these: none lies between them.")
	} else {
		fmt.Fprintf(out, "Maximal Nash subsets: %d; in each, any mix of %s's strategies listed against any mix of %s's is an equilibrium, and every equilibrium lies in one:\n", len(e.Subsets), players[0], players[1])
		for _, s := range e.Subsets {
			var xs, ys []string
			for _, k := range s.Rows {
				xs = append(xs, fmt.Sprintf("x%d", k+1))
			}
			for _, k := range s.Cols {
				ys = append(ys, fmt.Sprintf("y%d", k+1))
			}
			fmt.Fprintf(out, "  %s {%s} against %s {%s}\n", players[0], strings.Join(xs, ", "), players[1], strings.Join(ys, ", "))
		}
	}
	if e.CompletelyMixed() {
		fmt.Fprintln(out, "Completely mixed equilibria (every action played): yes")
	} else {
		fmt.Fprintln(out, "Completely mixed equilibria (every action played): none")
	}
}

func mixDesc(mix []*big.Rat, acts []*matrixv1.Action) string {
	var parts []string
	for i, p := range mix {
		switch {
		case p.Cmp(big.NewRat(1, 1)) == 0:
			return acts[i].GetId()
		case p.Sign() > 0:
			parts = append(parts, fmt.Sprintf("%s %s", acts[i].GetId(), p.RatString()))
		}
	}
	return strings.Join(parts, ", ")
}

// writeTree prints the tree's subgame-perfect equilibria and Nash outcomes.
func writeTree(out io.Writer, name string, tr *sequentialv1.Tree, t *equilibria.Tree) error {
	players := gamefile.Players(tr.GetPlayers())
	fmt.Fprintf(out, "%s: game tree, %d nodes; players %s\n", title(name, tr.GetTitle()), t.Len(), strings.Join(players, ", "))
	pathText := func(o equilibria.Outcome) string {
		var parts []string
		n := 0
		for _, b := range o.Path {
			br := tr.GetNodes()[n].GetBranches()[b]
			label := br.GetId()
			if br.GetLabel() != br.GetId() {
				label += " (" + br.GetLabel() + ")"
			}
			parts = append(parts, fmt.Sprintf("%s %s", players[t.Node(n).Player], label))
			n = t.Node(n).Children[b]
		}
		return fmt.Sprintf("%s -> %s", strings.Join(parts, ", "), o.Payoffs)
	}
	spe := equilibria.BackwardInduction(t)
	fmt.Fprintf(out, "Subgame-perfect path (backward induction): %s\n", pathText(spe.Path))
	if spe.Unique() {
		fmt.Fprintln(out, "Ties: none; the subgame-perfect equilibrium is unique")
	} else {
		fmt.Fprintln(out, "Ties (the mover is indifferent; the path above takes the first):")
		for _, tie := range spe.Ties {
			var ids []string
			for _, b := range tie.Branches {
				ids = append(ids, tr.GetNodes()[tie.Node].GetBranches()[b].GetId())
			}
			fmt.Fprintf(out, "  node %d (%s to move): %s\n", tie.Node, players[t.Node(tie.Node).Player], strings.Join(ids, ", "))
		}
		fmt.Fprintln(out, "Every subgame-perfect outcome (every way of breaking the ties):")
		for _, o := range spe.Outcomes {
			fmt.Fprintf(out, "  %s\n", pathText(o))
		}
	}
	fmt.Fprintln(out, "Outcomes of pure Nash equilibria (normal form, found without listing strategies):")
	for _, o := range equilibria.NashOutcomes(t) {
		note := "subgame-perfect"
		if !spe.OnPath(o.Path) {
			note = "not subgame-perfect"
		}
		fmt.Fprintf(out, "  %s (%s)\n", pathText(o), note)
	}
	return nil
}
