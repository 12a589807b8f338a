module github.com/phaseo/agent-sdk-go

go 1.26

require github.com/google/jsonschema-go v0.4.3
