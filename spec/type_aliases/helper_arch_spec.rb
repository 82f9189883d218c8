# frozen_string_literal: true

require 'spec_helper'

# The architectures the module's own helper runs on: the one it is built for
# (the Makefile's TARGET, what `make build` puts into files/clone-army) under
# the kernel's and the distributions' names for it, and nothing else.
describe 'Clone_army::Helper_arch' do
  makefile = File.read(File.expand_path('../../Makefile', __dir__))
  target = makefile[%r{^TARGET\s*:=\s*(\S+)$}, 1]

  it 'is built for a Linux target' do
    expect(target).to match(%r{\A[a-z0-9_]+-unknown-linux-(gnu|musl)\z})
  end

  it { is_expected.to allow_values(target.split('-').first) }
  it { is_expected.to allow_values('x86_64', 'amd64') }
  it { is_expected.not_to allow_values('aarch64', 'arm64', 'i686', 'i386', 'ppc64le', 's390x', 'X86_64', '', :undef) }
end
