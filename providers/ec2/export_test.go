package ec2

// ConvertInterface exposes the conversion to the contract tests.
var ConvertInterface = convertInterface
