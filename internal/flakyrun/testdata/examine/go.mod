module example.com/examine

go 1.24
