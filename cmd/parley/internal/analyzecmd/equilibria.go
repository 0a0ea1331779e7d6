package analyzecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
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
	// readFile reads a game file; os.ReadFile unless a test replaces it.
	readFile func(string) ([]byte, error)
}

// newEquilibriaCmd returns `analyze equilibria`. runF, when non-nil, replaces the run step.
func newEquilibriaCmd(deps *cli.Deps, runF func(context.Context, *equilibriaOptions) error) *cobra.Command {
	o := &equilibriaOptions{readFile: os.ReadFile}
	cmd := &cobra.Command{
		Use:   "equilibria GAME [GAME2 --compare]",
		Short: "Exact equilibria of a matrix game or a game tree given as data",
		Long: `Compute, exactly (rational arithmetic), the equilibria of a two-player game given as data.

GAME is a game file (YAML or JSON; format in referee/games/gamefile) or the name of a shipped
game (` + strings.Join(gamefile.Library(""), ", ") + `).

For a matrix game: every pure Nash equilibrium, whether each is Pareto-optimal (against all
profiles), the equilibria no other equilibrium Pareto-dominates, and the mixed equilibria
support enumeration finds (the 2x2 mixed equilibrium among them). For a game tree: the
subgame-perfect equilibrium by backward induction with every tie reported, every outcome a
subgame-perfect equilibrium can reach, and the outcomes of the pure Nash equilibria of the
tree's normal form. With --compare and two matrix games: whether they have the same
pure-equilibrium set.`,
		Example: `  parley analyze equilibria prisoners_dilemma
  parley analyze equilibria my-game.yaml
  parley analyze equilibria stag_hunt stag_hunt_2 --compare
  parley analyze equilibria golden_balls --scale 13600
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
	cmd.Flags().BoolVar(&o.compare, "compare", false, "compare the pure-equilibrium sets of two matrix games")
	cmd.Flags().BoolVar(&o.all, "all", false, "analyze every shipped game")
	cmd.Flags().StringVar(&o.scale, "scale", "", "multiply every payoff (a game's scale parameter, e.g. golden balls' jackpot); default the game's own")
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
			if err := writeMatrix(out, names[i], f.Table, scale, m); err != nil {
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
	c := equilibria.ComparePureNash(matrices[0], matrices[1])
	fmt.Fprintln(out)
	switch {
	case !c.SameShape:
		fmt.Fprintf(out, "Compare: not comparable: %s is %d x %d, %s is %d x %d.\n", names[0], matrices[0].Rows(), matrices[0].Cols(), names[1], matrices[1].Rows(), matrices[1].Cols())
	case c.Same:
		fmt.Fprintf(out, "Compare: the same pure-equilibrium set: %s.\n", profileSet(files[0].Table, c.A))
	default:
		fmt.Fprintf(out, "Compare: different pure-equilibrium sets: %s has %s, %s has %s.\n", names[0], profileSet(files[0].Table, c.A), names[1], profileSet(files[1].Table, c.B))
	}
	return nil
}

func profileName(t *matrixv1.Table, p equilibria.Profile) string {
	return fmt.Sprintf("(%s, %s)", t.GetRows()[p.Row].GetId(), t.GetCols()[p.Col].GetId())
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
func writeMatrix(out io.Writer, name string, t *matrixv1.Table, scale *big.Rat, m *equilibria.Matrix) error {
	players := gamefile.Players(t.GetPlayers())
	fmt.Fprintf(out, "%s: matrix game, %d x %d; rows %s, columns %s", title(name, t.GetTitle()), m.Rows(), m.Cols(), players[0], players[1])
	if scale.Cmp(big.NewRat(1, 1)) != 0 || t.GetScaleName() != "" {
		what := t.GetScaleName()
		if what == "" {
			what = "scale"
		}
		fmt.Fprintf(out, "; %s %s", what, equilibria.RatText(scale))
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprint(tw, "  ")
	for _, c := range t.GetCols() {
		fmt.Fprintf(tw, "\t%s", c.GetId())
	}
	fmt.Fprintln(tw)
	for i, r := range t.GetRows() {
		fmt.Fprintf(tw, "  %s", r.GetId())
		for j := range t.GetCols() {
			p := m.Payoffs(equilibria.Profile{Row: i, Col: j})
			fmt.Fprintf(tw, "\t%s, %s", equilibria.RatText(p[0]), equilibria.RatText(p[1]))
		}
		fmt.Fprintln(tw)
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
	mixed, err := equilibria.SupportEquilibria(m)
	if err != nil {
		fmt.Fprintf(out, "Mixed equilibria: not computed (%v)\n", err)
		return nil
	}
	var proper []equilibria.Mixed
	for _, x := range mixed {
		if !x.Pure() {
			proper = append(proper, x)
		}
	}
	if len(proper) == 0 {
		fmt.Fprintln(out, "Mixed equilibria (support enumeration): none besides the pure ones")
	} else {
		fmt.Fprintln(out, "Mixed equilibria (support enumeration):")
	}
	for _, x := range proper {
		fmt.Fprintf(out, "  %s: %s; %s: %s; expected payoffs %s\n", players[0], mixDesc(x.RowMix, t.GetRows()), players[1], mixDesc(x.ColMix, t.GetCols()), x.Payoffs)
	}
	if m.Rows() == 2 && m.Cols() == 2 {
		if _, ok := equilibria.Mixed2x2(m); !ok {
			fmt.Fprintln(out, "  (this 2x2 game has no completely mixed equilibrium)")
		}
	}
	if isDegenerate(m, pure) {
		fmt.Fprintln(out, "  (the game is degenerate: support enumeration may miss equilibria that form a continuum)")
	}
	return nil
}

// isDegenerate reports the simplest sign of degeneracy: some pure best reply is not unique.
func isDegenerate(m *equilibria.Matrix, _ []equilibria.Profile) bool {
	for _, p := range m.Profiles() {
		for player := range 2 {
			if !m.BestReply(p, player) {
				continue
			}
			own := m.Payoffs(p)[player]
			n := 0
			if player == equilibria.Row {
				for i := range m.Rows() {
					if m.Payoffs(equilibria.Profile{Row: i, Col: p.Col})[player].Cmp(own) == 0 {
						n++
					}
				}
			} else {
				for j := range m.Cols() {
					if m.Payoffs(equilibria.Profile{Row: p.Row, Col: j})[player].Cmp(own) == 0 {
						n++
					}
				}
			}
			if n > 1 {
				return true
			}
		}
	}
	return false
}

func mixDesc(mix []*big.Rat, acts []*matrixv1.Action) string {
	var parts []string
	for i, p := range mix {
		if p.Sign() > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", acts[i].GetId(), p.RatString()))
		}
	}
	return strings.Join(parts, ", ")
}

// writeTree prints the tree's subgame-perfect equilibria and Nash outcomes.
func writeTree(out io.Writer, name string, tr *sequentialv1.Tree, t *equilibria.Tree) error {
	players := gamefile.Players(tr.GetPlayers())
	fmt.Fprintf(out, "%s: game tree, %d nodes; players %s, %s\n", title(name, tr.GetTitle()), t.Len(), players[0], players[1])
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
		fmt.Fprintln(out, "Every subgame-perfect outcome:")
		for _, o := range spe.Outcomes {
			fmt.Fprintf(out, "  %s\n", pathText(o))
		}
	}
	nash, err := equilibria.NashOutcomes(t)
	if err != nil {
		fmt.Fprintf(out, "Nash equilibrium outcomes: not computed (%v)\n", err)
		return nil
	}
	fmt.Fprintln(out, "Outcomes of pure Nash equilibria (normal form):")
	for _, o := range nash {
		note := "subgame-perfect"
		if !spe.OnPath(o.Path) {
			note = "not subgame-perfect"
		}
		fmt.Fprintf(out, "  %s (%s)\n", pathText(o), note)
	}
	return nil
}
