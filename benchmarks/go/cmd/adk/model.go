package main

import (
	"context"
	"encoding/json"
	"iter"
	"sync/atomic"

	"github.com/phaseo/agent-sdk-bench-go/harness"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// scripted is ADK's model interface (model.LLM) answering the workload's turns in order,
// then "done". A function call's arguments are a map in genai; like a provider client, a
// turn decodes the JSON text of its calls' arguments when it is answered.
type scripted struct {
	turns [][]harness.Call
	next  atomic.Int64
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) GenerateContent(_ context.Context, _ *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		i := int(s.next.Add(1) - 1)
		if i >= len(s.turns) {
			yield(&model.LLMResponse{Content: genai.NewContentFromText("done", genai.RoleModel), TurnComplete: true}, nil)
			return
		}
		parts := make([]*genai.Part, len(s.turns[i]))
		for k, c := range s.turns[i] {
			var args map[string]any
			if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
				yield(nil, err)
				return
			}
			parts[k] = &genai.Part{FunctionCall: &genai.FunctionCall{ID: c.ID, Name: c.Name, Args: args}}
		}
		yield(&model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}, TurnComplete: true}, nil)
	}
}
