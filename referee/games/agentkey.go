package games

// AgentKey names the agent in a seat, one name per agent, everywhere agents are counted
// (ratings, standings, tables, metrics): "name@version" (the name alone when it gave no
// version), or the organiser's label when the label says more than that. A label that only
// repeats the agent's own name, as a tournament's default label "fair" for builtin:fair does,
// names the same agent as an unlabelled fair@1; a label that tells variants of one program apart
// (builtin:concede and builtin:concede?curve=boulware) keeps them apart.
func AgentKey(name, version, label string) string {
	own := name
	if version != "" {
		own += "@" + version
	}
	if label != "" && label != name && label != own {
		return label
	}
	return own
}
