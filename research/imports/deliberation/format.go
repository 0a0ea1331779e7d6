package deliberation

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/parley-arena/parley/agents/llm"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/research/imports"
)

// Study is the study's name, as research/studies has it.
const Study = "deliberation"

// Style is the language-model agent's prompt style for the platform's answers.
const Style = "deliberation"

// Format reads the platform's runs for the importer (imports.Format).
type Format struct{}

var _ imports.Format = Format{}

// Study names the study.
func (Format) Study() string { return Study }

// Kind: history*.json files are runs; the game and run folders' files are read beside them.
func (Format) Kind(p string) imports.FileKind {
	base := path.Base(p)
	switch {
	case strings.HasPrefix(base, "history") && strings.HasSuffix(base, ".json"):
		return imports.GameLog
	case !strings.HasSuffix(base, ".txt"):
		return imports.Skip
	case base == configFile, base == openingFile, base == "global_instructions.txt",
		path.Base(path.Dir(p)) == scoresDir, strings.Contains(p, "individual_instructions/"):
		return imports.Aux
	}
	return imports.Skip
}

// Folder names the folder of a run, whose runs make one tournament. The platform's folders
// repeat their last steps from game to game and model to model (base/output/M/all_coop/
// multi_agent/row5 beside game1/output/M/all_coop/multi_agent/row5), so the name is the whole
// path below the platform's games_descriptions folder (else from the game folder above
// output/, else the folder's last three steps), its steps joined by "-": the same however much
// of the path was given.
func (Format) Folder(p string) string {
	steps := strings.Split(path.Dir(path.Clean("/"+p)), "/")[1:]
	from := max(len(steps)-3, 0)
	if i := slices.Index(steps, "games_descriptions"); i >= 0 && i+1 < len(steps) {
		from = i + 1
	} else if i := lastIndex(steps, "output"); i > 0 {
		from = i - 1
	}
	return strings.Join(steps[from:], "-")
}

func lastIndex(steps []string, step string) int {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i] == step {
			return i
		}
	}
	return -1
}

// Read reads one run (see Read): a failed run is a match that ends with an agent fault and
// every party at its minimum, as the study counts it, not a void one.
func (Format) Read(f imports.File, aux imports.AuxReader) (*imports.Game, error) {
	run, err := Read(f.Name, f.Data, aux.ReadAux)
	if err != nil {
		return nil, err
	}
	g := &imports.Game{
		Game: rules.Name, Params: run.Params, Outcome: run.Outcome, Style: Style,
		// A history file names neither the repository nor the commit it was published in.
		Source: imports.Source{OriginalID: strings.TrimSuffix(path.Base(f.Name), ".json"), Format: "LLM-Deliberation history"},
	}
	for _, s := range run.Seats {
		seat := imports.Seat{Model: s.Model, Persona: s.Incentive,
			Description: fmt.Sprintf("%s played %s (%s) on the LLM-Deliberation platform", s.Model, s.Party, s.Incentive)}
		if s.Spoke {
			seat.Reasoning = strings.Join(s.Steps, ",")
			if seat.Reasoning == "" {
				seat.Reasoning = "none"
			}
			seat.Description += "; its prompts asked for steps: " + seat.Reasoning
		}
		g.Seats = append(g.Seats, seat)
	}
	for _, a := range run.Answers {
		g.Turns = append(g.Turns, imports.Turn{Seat: a.Seat, Answer: a.Full, Played: a.Played})
	}
	return g, nil
}

// Parse reads an answer with the language-model agent's deliberation style.
func (Format) Parse(obs *agentv1.Observation, answer string) (*agentv1.Action, error) {
	return llm.ReadReply(Style, obs, answer)
}
