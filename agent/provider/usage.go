package provider

import "github.com/org/mini-agent/agent"

// estimatedUsage is a call's usage when the server reported none (or only
// zeros): input tokens from the request body's size, output tokens from
// the response body's, at agent.BytesPerToken bytes a token, marked
// Estimated. Both sizes are of the JSON on the wire, framing included, so
// the estimate errs high: a budget trips early rather than never.
func estimatedUsage(sent, received int) agent.Usage {
	return agent.Usage{InputTokens: agent.EstimateTokens(sent), OutputTokens: agent.EstimateTokens(received), Estimated: true}
}
