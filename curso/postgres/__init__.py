"""PostgreSQL de usar y tirar, para la lección 07 y los tests: el cluster y las fixtures de pytest."""
