# @summary A SHA-256 digest in lower-case hex (64 characters), as `sha256sum` prints it.
#
# @example
#   'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
type Clone_army::Sha256 = Pattern[/\A[0-9a-f]{64}\z/]
