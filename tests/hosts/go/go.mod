module keyshift.test/gohost

go 1.19

require github.com/confluentinc/confluent-kafka-go/v2 v2.0.2
