module github.com/example/uploads

go 1.22

require github.com/gin-gonic/gin v1.10.0
