module github.com/phaseo/agent-sdk-go

go 1.26
