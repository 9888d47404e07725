"""Foundation: the keys and buckets (Storage, SecureBucket), the network (VPC, endpoints, Glue connections) and the
encrypted log groups every layer uses."""
