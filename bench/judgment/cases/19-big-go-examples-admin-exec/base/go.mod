module github.com/example/ginkit

go 1.22

require github.com/gin-gonic/gin v1.10.0
