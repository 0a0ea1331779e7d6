package bus
import ("testing";"runtime/debug")
func TestBI(t *testing.T){ info,ok:=debug.ReadBuildInfo(); t.Logf("%v %s %d", ok, info.Main.Path, len(info.Deps)); for _,d:=range info.Deps{t.Log(d.Path,d.Version)} }
