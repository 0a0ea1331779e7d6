package reproduce

// filing is where each folder of the shared archive belongs among the study's set-ups, as the
// transcripts' README says what each holds: the test's knowledge, never the matcher's.
func filing() map[string][]string {
	return map[string][]string{
		"base/output/gpt-4/all_coop/multi_agent/row5":                                      {"base/gpt-4"},
		"base/output/gpt4o_mini/all_coop/multi_agent/row1":                                 {"cot/1"},
		"base/output/gpt4o_mini/all_coop/multi_agent/row2":                                 {"cot/2", "variant/GPT-4o Mini/Compromising"},
		"base/output/gpt4o_mini/all_coop/multi_agent/row3":                                 {"cot/3"},
		"base/output/gpt4o_mini/all_coop/multi_agent/row4":                                 {"cot/4"},
		"base/output/gpt4o_mini/all_coop/multi_agent/row5":                                 {"base/GPT-4o Mini"},
		"base/output/gpt4o_mini/all_coop/multi_agent/row6":                                 {"cot/6"},
		"base/output/gpt4o_mini/all_coop/single_agent/row2":                                {"variant-solo/GPT-4o Mini/Compromising"},
		"base/output/gpt4o_mini/greedy/multi_agent/row2":                                   {"variant/GPT-4o Mini/Greedy"},
		"base/output/gpt4o_mini/greedy/single_agent/row2":                                  {"variant-solo/GPT-4o Mini/Greedy"},
		"base/output/gpt4o_mini/targeted_adv/row2":                                         {"variant/GPT-4o Mini/Targeted Adv"},
		"base/output/gpt4o_mini/untargeted_adv/row2":                                       {"variant/GPT-4o Mini/Untargeted Adv"},
		"base/output/llama_2_13b/coop_multi_agent_row5":                                    {"base/Llama 2-13B"},
		"base/output/llama_3_0_70b/coop_multi_agent_row5":                                  {"base/Llama 3.0-70B"},
		"base/output/llama_3_3_70b/coop_multi_agent_row5":                                  {"base/Llama 3.3-70B"},
		"base/output/qwen_2_5_1_5b/coop_multi_agent_row5":                                  {"base/Qwen 2.5 1.5B"},
		"base/output/qwen_2_5_32b/all_coop/multi_agent/row2":                               {"variant/Qwen 2.5 32B/Compromising"},
		"base/output/qwen_2_5_32b/all_coop/multi_agent/row5":                               {"base/Qwen 2.5 32B"},
		"base/output/qwen_2_5_32b/all_coop/single_agent/row2":                              {"variant-solo/Qwen 2.5 32B/Compromising"},
		"base/output/qwen_2_5_32b/all_coop/single_agent/row5":                              {"solo/Qwen 2.5 32B/6"},
		"base/output/qwen_2_5_32b/greedy/multi_agent/row2":                                 {"variant/Qwen 2.5 32B/Greedy"},
		"base/output/qwen_2_5_32b/greedy/single_agent/row2":                                {"variant-solo/Qwen 2.5 32B/Greedy"},
		"base/output/qwen_2_5_32b/targeted_adv/row2":                                       {"variant/Qwen 2.5 32B/Targeted Adv"},
		"base/output/qwen_2_5_32b/untargeted_adv/row2":                                     {"variant/Qwen 2.5 32B/Untargeted Adv"},
		"game1/output/gpt4o_mini/all_coop/multi_agent/row5":                                {"games/GPT-4o Mini/game1"},
		"game2/output/gpt4o_mini/all_coop/multi_agent/row5":                                {"games/GPT-4o Mini/game2"},
		"game3/output/gpt4o_mini/all_coop/multi_agent/row5":                                {"games/GPT-4o Mini/game3"},
		"game1/output/qwen_2_5_32b/all_coop/multi_agent/row5":                              {"games/Qwen 2.5 32B/game1"},
		"game2/output/qwen_2_5_32b/all_coop/multi_agent/row5":                              {"games/Qwen 2.5 32B/game2"},
		"game3/output/qwen_2_5_32b/all_coop/multi_agent/row5":                              {"games/Qwen 2.5 32B/game3"},
		"base/output/gpt4o_mini/untargeted_adv_veto_dot/row2":                              nil, // another party is the adversary
		"base/output/gpt4o_mini/untargeted_adv_veto_environment/row2":                      nil, // another p2
		"base/output/gpt-4/all_coop/single_agent/row5":                                     nil, // GPT-4 alone: no table
		"base/output/gpt4o_mini/all_coop/single_agent/row5":                                nil, // 23 solo turns: no table
		"base_rewritten/output/gpt4o-mini/all_coop/row5":                                   nil, // other party names
		"base_rewritten_perturbed/output/gpt4o-mini/all_coop/row5":                         nil, // other names and numbers
		"game1/output/gpt4o_mini/all_coop/single_agent/row5":                               nil, // Table 7 is multi-agent only
		"game2/output/gpt4o_mini/all_coop/single_agent/row5":                               nil,
		"game3/output/gpt4o_mini/all_coop/single_agent/row5":                               nil,
		"game1/output/qwen_2_5_32b/all_coop/single_agent/row5":                             nil,
		"game2/output/qwen_2_5_32b/all_coop/single_agent/row5":                             nil,
		"game3/output/qwen_2_5_32b/all_coop/single_agent/row5":                             nil,
		"base_rewritten/games_descriptions/base_rewritten/output/gpt4o-mini/all_coop/row5": nil,
	}
}
