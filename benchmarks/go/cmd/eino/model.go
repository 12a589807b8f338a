package main

import (
	"context"
	"sync/atomic"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/phaseo/agent-sdk-bench-go/harness"
)

// scripted is Eino's model interface (model.ToolCallingChatModel) answering the
// workload's turns in order, then "done". The messages are built when the run is prepared;
// a turn only hands out the next one.
type scripted struct {
	turns []*schema.Message
	next  atomic.Int64
}

func newScripted(w harness.Workload) *scripted {
	s := &scripted{}
	for _, turn := range w.Turns {
		calls := make([]schema.ToolCall, len(turn))
		for i, c := range turn {
			calls[i] = schema.ToolCall{ID: c.ID, Type: "function",
				Function: schema.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
		}
		s.turns = append(s.turns, &schema.Message{Role: schema.Assistant, ToolCalls: calls})
	}
	s.turns = append(s.turns, &schema.Message{Role: schema.Assistant, Content: "done"})
	return s
}

func (s *scripted) Generate(_ context.Context, _ []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	i := int(s.next.Add(1) - 1)
	if i >= len(s.turns) {
		i = len(s.turns) - 1
	}
	return s.turns[i], nil
}

func (s *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m, err := s.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{m}), nil
}

func (s *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return s, nil }
