# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Facts' do
  it { is_expected.to allow_values({}, { 'role' => 'web', 'tier' => 3, 'weight' => 0.5, 'canary' => false, 'x_1' => '' }) }
  it { is_expected.to allow_value('a' * 128 => 'x' * 4096) }
  it { is_expected.not_to allow_values({ 'Role' => 'web' }, { 'a-b' => 1 }, { '' => 1 }, { 'a' * 129 => 1 }) }
  it { is_expected.not_to allow_values({ 'role' => ['web'] }, { 'role' => { 'a' => 1 } }, { 'role' => 'x' * 4097 }, 'role=web') }
end
