module github.com/phaseo/agent-sdk-go/docs-examples

go 1.26

require github.com/phaseo/agent-sdk-go v0.0.0

require github.com/google/jsonschema-go v0.4.3 // indirect

replace github.com/phaseo/agent-sdk-go => ../../../bindings-go
