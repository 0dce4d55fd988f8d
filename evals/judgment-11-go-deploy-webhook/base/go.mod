module github.com/example/deployer

go 1.22
