# The source of this module: `warden permissions --format terraform` writes it as it is,
# and the policy documents beside it from the code.

terraform {
  required_version = ">= 1.3"
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 5.0"
    }
  }
}
