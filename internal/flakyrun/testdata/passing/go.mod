module example.com/passing

go 1.24
