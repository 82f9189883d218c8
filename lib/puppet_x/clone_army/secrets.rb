# frozen_string_literal: true

require_relative 'schema'

require 'tmpdir'

module PuppetX
  module CloneArmy
    # Secrets handed to the helper (root password hash, challenge password).
    #
    # They never go on a command line, where `ps` and Puppet's debug log would
    # show them: each is written to a file of mode 0600 in a private
    # directory (mode 0700) that exists only while the helper runs, and whose
    # path is passed instead (`--root-password-hash-file PATH`).
    module Secrets
      # The clone_army_clone parameters that hold secrets.
      PARAMETERS = [:root_password_hash, :challenge_password].freeze

      # crypt(3) hashes, by the helper's rule (its schema's `crypt_hash`): MD5
      # ($1$), bcrypt ($2a$, $2b$, $2x$, $2y$), SHA-256 ($5$), SHA-512 ($6$),
      # scrypt ($7$), yescrypt ($y$, Debian's default) and gost-yescrypt
      # ($gy$). A locked password ('!', '*') is not a hash: leave the
      # parameter out for that.
      CRYPT_HASH = Schema.anchored(Schema.fetch('crypt_hash', 'pattern'))
      CRYPT_HASH_RULE = Schema.fetch('crypt_hash', 'rule')

      # The plain value of a parameter that may arrive wrapped in Sensitive.
      def self.unwrap(value)
        value.respond_to?(:unwrap) ? value.unwrap : value
      end

      # Never names the value in the message.
      def self.validate_crypt_hash(attribute, value)
        plain = unwrap(value)
        return if plain.is_a?(String) && plain.match?(CRYPT_HASH)

        raise ArgumentError,
              "#{attribute} must be #{CRYPT_HASH_RULE} " \
              '(make one with `mkpasswd -m yescrypt` or `openssl passwd -6`); the value given is not one (not shown)'
      end

      # What a CSR's challengePassword attribute holds, at most (the helper's figure).
      CHALLENGE_PASSWORD_MAX_BYTES = Schema.fetch('challenge_password_max_bytes')

      # A challenge password: one line of printable text, 1 to
      # CHALLENGE_PASSWORD_MAX_BYTES bytes, as the helper accepts it.
      def self.validate_challenge_password(attribute, value)
        plain = unwrap(value)
        if plain.is_a?(String) && !plain.empty? && plain.bytesize <= CHALLENGE_PASSWORD_MAX_BYTES &&
           !plain.match?(%r{[[:cntrl:]]})
          return
        end

        raise ArgumentError,
              "#{attribute} must be one line of 1 to #{CHALLENGE_PASSWORD_MAX_BYTES} bytes without control " \
              'characters; the value given is not (not shown)'
      end

      # Writes each non-nil secret of `secrets` ({ name => value }) into its
      # own file and yields { name => path } (empty when there is none). The
      # files and their directory are removed when the block returns or
      # raises.
      def self.with_files(secrets)
        present = secrets.compact
        return yield({}) if present.empty?

        Dir.mktmpdir('clone-army-secrets-') do |dir|
          File.chmod(0o700, dir)
          paths = present.to_h do |name, value|
            path = File.join(dir, name.to_s)
            File.open(path, File::WRONLY | File::CREAT | File::EXCL, 0o600) { |file| file.write(unwrap(value)) }
            [name, path]
          end
          yield paths
        end
      end
    end
  end
end
