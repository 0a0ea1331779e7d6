package main

// No Docker engine runs in CI, so docker-compose.yml and the Dockerfile are checked here
// instead: the compose file loads and validates with compose-go (the loader `docker compose`
// itself uses), every parley command in it (service commands, health checks, the image's
// default command) is a real subcommand whose flags and PARLEY_* variables parse, the
// addresses services use to reach each other name a service listening on that port, and the
// Dockerfile copies only paths that exist.

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	composecli "github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/root"
	"github.com/parley-arena/parley/referee/families"
)

// imageRoot is where the Dockerfile puts the repository's files the example bots need.
const imageRoot = "/opt/parley/"

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	dir := repoRoot(t)
	opts, err := composecli.NewProjectOptions([]string{filepath.Join(dir, "docker-compose.yml")},
		composecli.WithWorkingDirectory(dir), composecli.WithName("parley"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

// checkParleyArgs fails unless args (without the program name) are a parley subcommand whose
// flags, positional arguments and environment variables parse. It returns the command.
func checkParleyArgs(t *testing.T, where string, args []string, env map[string]string) *cobra.Command {
	t.Helper()
	deps := &cli.Deps{Out: &strings.Builder{}, Err: &strings.Builder{}, Games: families.New(), Builtins: builtin.Agents{}, Getenv: func(k string) string { return env[k] }}
	top := root.NewCmd(deps)
	cmd, rest, err := top.Find(args)
	if err != nil || cmd == top {
		t.Errorf("%s: %q is not a parley subcommand (%v)", where, args, err)
		return nil
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: parley %s: %v", where, strings.Join(args, " "), err)
		return nil
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		t.Errorf("%s: parley %s: %v", where, strings.Join(args, " "), err)
	}
	for k := range env {
		if !strings.HasPrefix(k, "PARLEY_") {
			continue
		}
		known := false
		cmd.Flags().VisitAll(func(f *pflag.Flag) { known = known || cli.EnvName(f.Name) == k })
		if !known {
			t.Errorf("%s: $%s is not a flag of parley %s", where, k, cmd.Name())
		}
	}
	if err := cli.ApplyEnv(cmd, deps.Getenv); err != nil {
		t.Errorf("%s: %v", where, err)
	}
	return cmd
}

func serviceEnv(s types.ServiceConfig) map[string]string {
	env := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			env[k] = *v
		}
	}
	return env
}

// flagValue is the value of --name in args, or "" when absent.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	for _, want := range []string{"nats", "referee", "analytics", "gateway", "bot-go", "bot-python", "bot-typescript"} {
		if _, ok := p.Services[want]; !ok {
			t.Errorf("docker-compose.yml has no %s service", want)
		}
	}
	if t.Failed() {
		return
	}

	// Where each service listens, to check the addresses the others dial.
	listens := map[string]string{} // service -> port
	for name, s := range p.Services {
		if s.HealthCheck == nil || len(s.HealthCheck.Test) == 0 || s.HealthCheck.Disable {
			t.Errorf("service %s has no health check", name)
		}
		if name == "nats" {
			listens[name] = "4222"
			continue
		}
		if s.Image != "parley:latest" || s.Build == nil || s.Build.Context != repoRoot(t) {
			t.Errorf("service %s does not run the parley image built from the Dockerfile (image %q, build %+v)", name, s.Image, s.Build)
		}
		args := []string(s.Command)
		if len(s.Entrypoint) == 0 {
			checkParleyArgs(t, "service "+name, args, serviceEnv(s))
		} else {
			checkScript(t, name, s.Entrypoint, args)
		}
		if addr := flagValue(args, "listen"); addr != "" {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				t.Errorf("service %s: --listen %q: %v", name, addr, err)
			}
			listens[name] = port
		}
		if hc := s.HealthCheck; hc != nil && len(hc.Test) > 2 && hc.Test[0] == "CMD" && hc.Test[1] == "parley" {
			checkParleyArgs(t, "health check of "+name, hc.Test[2:], nil)
		}
	}

	// Every address a service dials names a service listening on that port.
	dials := func(name, what, addr string) {
		addr = strings.TrimPrefix(strings.TrimPrefix(addr, "nats://"), "grpc://")
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Errorf("service %s: %s %q: %v", name, what, addr, err)
			return
		}
		if got, ok := listens[host]; !ok || got != port {
			t.Errorf("service %s: %s %q: no service %s listening on port %s (listens: %v)", name, what, addr, host, port, listens)
		}
	}
	for name, s := range p.Services {
		if v := serviceEnv(s)["PARLEY_NATS"]; v != "" {
			dials(name, "$PARLEY_NATS", v)
		}
		for _, f := range []string{"nats", "referee", "analytics"} {
			if v := flagValue(s.Command, f); v != "" {
				dials(name, "--"+f, v)
			}
		}
	}
	if v := serviceEnv(p.Services["gateway"])["PARLEY_NATS"] + flagValue(p.Services["gateway"].Command, "nats"); v == "" {
		t.Error("the gateway does not name the NATS server (it would start an embedded one of its own)")
	}

	// Two referees share the work queue; exactly one of them requests the tournaments' matches.
	referees, requesting := 0, 0
	for _, s := range p.Services {
		if len(s.Command) == 0 || s.Command[0] != "referee" {
			continue
		}
		n := 1
		if s.Deploy != nil && s.Deploy.Replicas != nil {
			n = *s.Deploy.Replicas
		}
		referees += n
		if v := flagValue(s.Command, "tournaments"); v == "" || v == "true" {
			requesting += n
		}
	}
	if referees != 2 || requesting != 1 {
		t.Errorf("%d referees, %d of them requesting tournaments' matches; want 2 and 1", referees, requesting)
	}
	mounted := func(svc, volume, target string) {
		for _, v := range p.Services[svc].Volumes {
			if v.Type == types.VolumeTypeVolume && v.Source == volume && v.Target == target {
				return
			}
		}
		t.Errorf("service %s does not mount volume %s at %s", svc, volume, target)
	}
	mounted("nats", "nats-data", "/data")
	mounted("analytics", "analytics-data", "/data")
	if db := flagValue(p.Services["analytics"].Command, "db"); !strings.HasPrefix(db, "/data/") {
		t.Errorf("analytics keeps its database at %q, outside its volume", db)
	}

	// The NATS image is the version the Makefile pins for tests.
	mk, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`NATS_SERVER_VERSION\s*:=\s*v(\S+)`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile pins no NATS_SERVER_VERSION")
	}
	if want := "nats:" + string(m[1]) + "-alpine"; p.Services["nats"].Image != want {
		t.Errorf("nats image is %q; the Makefile tests against %s", p.Services["nats"].Image, want)
	}

	// Where a compose CLI is installed, it must accept the file too.
	if exec.Command("docker", "compose", "version").Run() == nil {
		out, err := exec.Command("docker", "compose", "-f", filepath.Join(repoRoot(t), "docker-compose.yml"), "config", "-q").CombinedOutput()
		if err != nil {
			t.Errorf("docker compose config: %v\n%s", err, out)
		}
	} else {
		t.Log("no docker compose here: checked with compose-go only")
	}
}

// checkScript checks a bot started by an interpreter from the image: the script is a file of
// the repository, and every flag given to it appears in its --help.
func checkScript(t *testing.T, service string, entrypoint, args []string) {
	t.Helper()
	var interp, script string
	switch {
	case len(entrypoint) == 1 && entrypoint[0] == "parley-example-go":
		script = buildGoExample(t)
		if df, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile")); err != nil || !strings.Contains(string(df), "-o /out/parley-example-go ./agents/sdk/example") {
			t.Errorf("service %s: the Dockerfile does not build parley-example-go from agents/sdk/example (%v)", service, err)
		}
	case len(entrypoint) == 2 && strings.HasPrefix(entrypoint[1], imageRoot) && entrypoint[0] == "python3":
		interp = "/usr/bin/python3" // Debian's, which has grpc, as the image's python3
	case len(entrypoint) == 2 && strings.HasPrefix(entrypoint[1], imageRoot) && entrypoint[0] == "node":
		interp, _ = buildTypeScript(t) // the script is compiled, as in the image
	default:
		t.Errorf("service %s: entrypoint %q is neither parley-example-go nor INTERPRETER %sPATH", service, entrypoint, imageRoot)
		return
	}
	if script == "" {
		script = filepath.Join(repoRoot(t), strings.TrimPrefix(entrypoint[1], imageRoot))
	}
	if _, err := os.Stat(script); err != nil {
		t.Errorf("service %s: %v", service, err)
		return
	}
	cmd := exec.Command(script, "--help")
	if interp != "" {
		cmd = exec.Command(interp, script, "--help")
	}
	help, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("service %s: %s %s --help: %v\n%s", service, interp, script, err, help)
		return
	}
	for _, a := range args {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if !strings.Contains(string(help), "-"+name) { // Go's flag package shows one dash
				t.Errorf("service %s: %s has no flag --%s", service, filepath.Base(script), name)
			}
		}
	}
}

func TestDockerfile(t *testing.T) {
	dir := repoRoot(t)
	f, err := os.Open(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Join continuation lines, drop comments.
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	var stages []string
	var entrypoint, command []string
	for _, line := range lines {
		instr, rest, _ := strings.Cut(line, " ")
		fields := strings.Fields(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			entrypoint, command = nil, nil
			if i := slices.Index(fields, "AS"); i >= 0 && i+1 < len(fields) {
				stages = append(stages, fields[i+1])
			}
		case "COPY":
			from := ""
			var paths []string
			for _, fl := range fields {
				if v, ok := strings.CutPrefix(fl, "--from="); ok {
					from = v
				} else if !strings.HasPrefix(fl, "--") {
					paths = append(paths, fl)
				}
			}
			if from != "" {
				if !slices.Contains(stages, from) {
					t.Errorf("Dockerfile: COPY --from=%s names no earlier stage (%v)", from, stages)
				}
				continue
			}
			for _, src := range paths[:len(paths)-1] {
				if src == "." {
					continue
				}
				if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
					t.Errorf("Dockerfile: COPY %s: not in the repository", src)
				}
			}
		case "ENTRYPOINT":
			entrypoint = jsonArray(t, rest)
		case "CMD":
			command = jsonArray(t, rest)
		case "HEALTHCHECK":
			_, cmd, ok := strings.Cut(rest, "CMD ")
			if !ok {
				t.Errorf("Dockerfile: HEALTHCHECK without CMD: %s", rest)
				continue
			}
			hc := jsonArray(t, cmd)
			if len(hc) < 2 || hc[0] != "parley" {
				t.Errorf("Dockerfile: health check %q does not run parley", hc)
				continue
			}
			checkParleyArgs(t, "Dockerfile HEALTHCHECK", hc[1:], nil)
		}
	}
	if !slices.Equal(entrypoint, []string{"parley"}) {
		t.Fatalf("the image's entrypoint is %q, want parley", entrypoint)
	}
	if len(command) == 0 {
		t.Fatal("the image has no default command")
	}
	checkParleyArgs(t, "Dockerfile CMD", command, nil)
}

// jsonArray parses an exec-form instruction argument like ["a", "b"].
func jsonArray(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Errorf("Dockerfile: %q is not in exec form: %v", s, err)
	}
	return out
}
