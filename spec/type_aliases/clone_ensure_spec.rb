# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Clone_ensure' do
  it { is_expected.to allow_values('present', 'running', 'stopped') }
  it { is_expected.not_to allow_values('absent', 'true', true, :undef) }
end
